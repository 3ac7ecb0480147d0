"""Queued jobs of the blog: reindexing an article, and the periodic scan that reconciles.

procrastinate keeps them in the same PostgreSQL, so a job is queued in the transaction that
saved the article, survives restarts, and is retried when the embedding backend fails.
"""

import logging
import sys

from django.utils import timezone
from procrastinate import JobContext, RetryStrategy
from procrastinate.contrib.django import app
from procrastinate.jobs import Job

from blog import indexing
from blog.embeddings import EmbeddingError
from ops.logs import log_text
from ops.metrics import indexing_job_count

logger = logging.getLogger(__name__)

# An embedding endpoint that is briefly down should not lose a job: tried again 2, 4, 8, 16
# and 32 s later (procrastinate waits exponential_wait ** (attempts + 1) seconds). It was
# exponential_wait=1, meant as 1, 2, 4, 8, 16 s: 1 ** n is 1, so six retries 1 s apart, and an
# endpoint down for six seconds failed the job for good.
RETRY = RetryStrategy(max_attempts=5, exponential_wait=2)


@app.task(name="blog.article_index", queue="index", retry=RETRY, pass_context=True)
def article_index(
    context: JobContext,
    *,
    article_id: int,
    force: bool = False,
    first_run: list[int] | None = None,
) -> None:
    """Reindex one article (queued by its saves, blog.signals, and by the first run's scan,
    which passes `first_run=[n, total]`: this article's place in the count it shows)."""
    try:
        indexing.article_index_run(article_id=article_id, force=force)
    except Exception as exc:
        indexing_job_count(ok=False)  # procrastinate retries it
        _failure_log(context.job, article_id, exc)
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


def _failure_log(job: Job, article_id: int, exc: Exception) -> None:
    """One line per failed attempt: the article, the cause, and what happens next.

    procrastinate logs a retried attempt at INFO (below the level it is kept at) and only the
    last with a traceback: an embedding endpoint down for half a minute left no line at all.
    """
    cause = log_text(f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}")
    attempt = job.attempts + 1
    decision = RETRY.get_retry_decision(exception=exc, job=job)
    if decision is not None:
        wait = max(0, round((decision.retry_at - timezone.now()).total_seconds()))
        logger.warning(
            "indexing article %s failed (attempt %s of %s): %s; tried again in %s s",
            article_id, attempt, RETRY.max_attempts + 1, cause, wait,
        )  # fmt: skip
        return
    if isinstance(exc, EmbeddingError):  # said here in full: procrastinate's traceback goes
        exc.docent_said = True  # type: ignore[attr-defined]  (ops.logs.SaidJobFailureFilter)
    logger.error(
        "indexing article %s failed for good after %s attempts: %s; it stays out of search "
        "until the cause is fixed and it is reindexed (manage.py reindex, or retry the job in "
        "the admin's job list)",
        article_id, attempt, cause,
    )  # fmt: skip


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
