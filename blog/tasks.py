"""Queued jobs of the blog: reindexing an article, and the periodic scan that reconciles.

procrastinate keeps them in the same PostgreSQL, so a job is queued in the transaction that
saved the article, survives restarts, and is retried when the embedding backend fails.
"""

import logging
import sys

from procrastinate import RetryStrategy
from procrastinate.contrib.django import app

from blog import indexing
from ops.metrics import indexing_job_count

logger = logging.getLogger(__name__)

# An embedding endpoint that is briefly down should not lose a job: 1, 2, 4, 8, 16 s apart.
RETRY = RetryStrategy(max_attempts=6, exponential_wait=1)


@app.task(name="blog.article_index", queue="index", retry=RETRY)
def article_index(
    *, article_id: int, force: bool = False, first_run: list[int] | None = None
) -> None:
    """Reindex one article (queued by its saves, blog.signals, and by the first run's scan,
    which passes `first_run=[n, total]`: this article's place in the count it shows)."""
    try:
        indexing.article_index_run(article_id=article_id, force=force)
    except Exception:
        indexing_job_count(ok=False)  # procrastinate retries it
        raise
    indexing_job_count(ok=True)
    if first_run:
        _first_run_count(*first_run)


@app.task(name="blog.reindex_scan", queue="index", retry=RETRY)
def reindex_scan(*, first_run: bool = False) -> None:
    """Bring the whole index up to date; on a first run, one job per article, counted."""
    if first_run:
        # Not one long job: an author's save goes ahead of the articles still waiting.
        _first_run_count(0, indexing.articles_first_run_enqueue())
        return
    summary = indexing.articles_reindex()
    if summary.changed or summary.removed:
        logger.info(
            "reindex scan: %d scanned, %d changed, %d removed",
            summary.scanned,
            summary.changed,
            summary.removed,
        )


@app.periodic(cron="*/10 * * * *", periodic_id="reconcile")
@app.task(
    name="blog.reindex_reconcile",
    queue="maintenance",
    queueing_lock="reindex-reconcile",
    lock="index",  # never beside another indexing job
    priority=-10,  # after any waiting indexing job
)
def reindex_reconcile(timestamp: int) -> None:
    """Every ten minutes: catch articles changed behind the queue's back (raw SQL, fixtures)."""
    reindex_scan(first_run=False)


def _first_run_count(done: int, total: int) -> None:
    """A labelled counter on stderr: "Indexing demo articles, first run only: 3/14".

    On a terminal it redraws one line. Anywhere else (a log file, `docker logs`, journald) a
    carriage return redraws nothing: the counts ran together into one line, with the server's
    log lines glued to its end, so there each count is a line of its own.
    """
    stream = sys.stderr
    line = f"Indexing demo articles, first run only: {done}/{total}"
    last = done >= total
    stream.write(f"\r{line}{'\n' if last else ''}" if stream.isatty() else f"{line}\n")
    stream.flush()
