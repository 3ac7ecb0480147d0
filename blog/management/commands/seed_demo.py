from django.core.management.base import BaseCommand

from blog.models import Article
from blog.services import demo_articles_load


class Command(BaseCommand):
    help = "Load the demo articles (published). Existing demo articles are updated in place."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when the blog already has articles."
        )

    def handle(self, *args, if_empty: bool, **options) -> None:
        if if_empty and Article.objects.exists():
            self.stdout.write("The blog has articles; demo articles not loaded.")
            return
        created, updated = demo_articles_load()
        self.stdout.write(
            self.style.SUCCESS(f"Demo articles: {created} created, {updated} updated.")
        )
