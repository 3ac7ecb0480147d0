"""`manage.py reindex`: bring the knowledge base up to date with the articles."""

import sys

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError
from tqdm import tqdm

from blog.embeddings import EmbeddingError
from blog.indexing import articles_reindex
from blog.models import Article


class Command(BaseCommand):
    help = (
        "Chunk and embed published articles whose content changed (unchanged ones cost nothing); "
        "remove chunks of drafts."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--full",
            action="store_true",
            help="Re-embed everything, e.g. after changing the embedding model or its dimensions.",
        )
        parser.add_argument("--article", metavar="SLUG", help="Only this article.")
        parser.add_argument(
            "--batch-size",
            type=int,
            metavar="N",
            help=f"Texts per embedding call (default {settings.EMBEDDING_BATCH_SIZE}).",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Say what would change; write nothing."
        )

    def handle(self, *args, full: bool, article, batch_size, dry_run: bool, **options) -> None:
        if batch_size is not None and batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        # tqdm needs the raw stream: Django's wrapper would end every "\r" redraw with "\n".
        stream = getattr(self.stderr, "_out", sys.stderr)
        bar = tqdm(unit="article", file=stream, disable=options["verbosity"] == 0)
        try:
            summary = articles_reindex(
                full=full,
                slug=article,
                batch_size=batch_size,
                dry_run=dry_run,
                progress=self.progress(bar),
            )
        except Article.DoesNotExist as exc:
            raise CommandError(f"No article with the slug {article!r}.") from exc
        except (EmbeddingError, ImproperlyConfigured, DatabaseError) as exc:
            raise CommandError(f"Reindex failed: {exc}") from exc
        finally:
            bar.close()
        if dry_run:
            self.stdout.write(
                f"Dry run: scanned {summary.scanned} articles; {summary.changed} would be "
                f"reindexed, {summary.embedded} chunks embedded, {summary.removed} removed."
            )
            return
        line = (
            f"Scanned {summary.scanned} articles, {summary.changed} changed, "
            f"{summary.embedded} chunks embedded in {summary.seconds:.1f}s"
        )
        if summary.removed:
            line += f" ({summary.removed} unpublished removed)"
        self.stdout.write(self.style.SUCCESS(line + "."))

    @staticmethod
    def progress(bar: tqdm):
        def update(count: int) -> None:
            # The first call gives the total; later ones one article each.
            if bar.total is None:
                bar.reset(total=count)
            else:
                bar.update(count)

        return update
