"""`catalogue_traditional`: write locale/zh_Hant from locale/zh_Hans (docent/traditional.py)."""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from docent.traditional import TARGET, catalogues_traditional_write


class Command(BaseCommand):
    help = "Write the Traditional Chinese catalogues from the Simplified ones, then compile them."

    def handle(self, *args, **options) -> None:
        for path in catalogues_traditional_write(locale=settings.LOCALE_PATHS[0]):
            self.stdout.write(f"wrote {path}")
        call_command("compilemessages", locale=[TARGET], verbosity=0)
