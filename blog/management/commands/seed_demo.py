from django.core.management.base import BaseCommand

from blog.models import Article
from blog.services import demo_articles_load, demo_articles_remove


class Command(BaseCommand):
    help = (
        "Load the demo articles (published). Existing demo articles are updated in place; "
        "--remove deletes them."
    )

    def add_arguments(self, parser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--if-empty", action="store_true", help="Do nothing when the blog already has articles."
        )
        action.add_argument(
            "--remove",
            action="store_true",
            help="Delete the demo articles (and tags only they carry); your own articles stay.",
        )

    def handle(self, *args, if_empty: bool, remove: bool, **options) -> None:
        if remove:
            removed = demo_articles_remove()
            self.stdout.write(
                self.style.SUCCESS(f"Demo articles removed: {removed}; they stay away at restarts.")
            )
            return
        if if_empty and Article.objects.exists():
            self.stdout.write("The blog has articles; demo articles not loaded.")
            return
        created, updated = demo_articles_load()
        self.stdout.write(
            self.style.SUCCESS(f"Demo articles: {created} created, {updated} updated.")
        )
