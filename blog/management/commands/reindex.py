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
from blog.reindex_runs import reindex_recorded


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
        progress = Progress(
            # tqdm needs the raw stream: Django's wrapper would end every "\r" redraw with "\n".
            stream=getattr(self.stderr, "_out", sys.stderr),
            disable=options["verbosity"] == 0,
        )
        try:
            if dry_run:
                summary = articles_reindex(
                    full=full, slug=article, batch_size=batch_size, dry_run=True,
                    progress=progress.update,
                )  # fmt: skip
            else:  # recorded and said, for the operator (blog.reindex_runs)
                summary = reindex_recorded(
                    full=full, slug=article, batch_size=batch_size, progress=progress.update
                )
        except Article.DoesNotExist as exc:
            raise CommandError(f"No article with the slug {article!r}.") from exc
        except (EmbeddingError, ImproperlyConfigured, DatabaseError) as exc:
            raise CommandError(f"Reindex failed: {exc}") from exc
        finally:
            progress.close()
        scanned = _count(summary.scanned, "article")
        if dry_run:
            self.stdout.write(
                f"Dry run: scanned {scanned}; {summary.changed} would be reindexed, "
                f"{_count(summary.embedded, 'chunk')} embedded, {summary.removed} removed."
            )
            return
        line = (
            f"Scanned {scanned}, {summary.changed} changed, "
            f"{_count(summary.embedded, 'chunk')} embedded in {summary.seconds:.1f}s"
        )
        if summary.removed:
            line += f" ({summary.removed} unpublished removed)"
        self.stdout.write(self.style.SUCCESS(line + "."))


class Progress:
    """A tqdm bar opened at the first call, which gives the total; later calls add one each.

    Opened up front, it drew a bar with no total ("0article [00:00, ?article/s]") before every
    run, and left it in front of the error when the slug did not exist.
    """

    def __init__(self, *, stream, disable: bool) -> None:
        self.stream, self.disable = stream, disable
        self.bar: tqdm | None = None

    def update(self, count: int) -> None:
        if self.bar is None:
            self.bar = tqdm(total=count, unit="article", file=self.stream, disable=self.disable)
        else:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
