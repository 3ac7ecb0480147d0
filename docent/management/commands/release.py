"""The release step: once per deploy, before the web processes (a Kubernetes Job)."""

from django.core.management.base import BaseCommand

from docent import startup


class Command(BaseCommand):
    help = "Migrate, load the demo articles into an empty blog, queue a reindex scan."

    def handle(self, *args, **options) -> None:
        startup.release(say=self.stdout.write)
        self.stdout.write("Release done.")
