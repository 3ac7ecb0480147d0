"""`manage.py reindex` as the operator sees it: a `ReindexRun` row and a start, end or failure line.

The command runs in a process of its own: it moved no metric and wrote no line where the site's
log goes, so a 92 s full reindex of 14 articles showed nowhere. Its row is renewed after each
article, and every web process's scrape reads it (`ops.collectors.ReindexCollector`).
"""

import logging
import time
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError
from django.db.models import F
from django.utils import timezone

from blog.indexing import ReindexSummary, articles_reindex
from blog.models import Article, ReindexRun

logger = logging.getLogger(__name__)

RUNS_KEPT = 100  # older rows are deleted as a run starts


def reindex_recorded(
    *,
    full: bool = False,
    slug: str | None = None,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReindexSummary:
    """`articles_reindex`, recorded in a `ReindexRun` and said as it starts, ends or fails.

    Args:
        full, slug, batch_size: as `articles_reindex`'s.
        progress: as `articles_reindex`'s (the command's progress bar).

    Returns:
        The run's summary.

    Raises:
        Whatever `articles_reindex` raises, once the run is recorded as failed (or stopped,
        for Ctrl-C).
    """
    if slug is not None:
        Article.objects.get(slug=slug)  # a mistyped slug is the operator's, not a failed run
    run = _run_start(full=full)
    started = time.perf_counter()
    tracker = _Tracker(run=run, full=full, slug=slug, then=progress)
    try:
        summary = articles_reindex(
            full=full, slug=slug, batch_size=batch_size, progress=tracker.update
        )
    except BaseException as exc:
        _run_fail(run=run, exc=exc, seconds=time.perf_counter() - started)
        raise
    _run_finish(run=run, summary=summary)
    return summary


class _Tracker:
    """The progress callback: the start line at the first call (it gives the total), then the
    row renewed after each article."""

    def __init__(self, *, run: ReindexRun, full: bool, slug: str | None, then) -> None:
        self.run, self.full, self.slug, self.then = run, full, slug, then
        self.started = False

    def update(self, count: int) -> None:
        if not self.started:
            self.started = True
            self.run.articles_total = count
            ReindexRun.objects.filter(pk=self.run.pk).update(articles_total=count)
            what = f"article {self.slug}" if self.slug else f"{count} published articles"
            logger.info(
                "reindex %d started%s: %s to scan",
                self.run.pk,
                " (--full: every article re-embedded)" if self.full else "",
                what,
                extra={"fields": _fields(self.run, articles_total=count)},
            )
        else:
            ReindexRun.objects.filter(pk=self.run.pk).update(
                articles_scanned=F("articles_scanned") + count, progress_at=timezone.now()
            )
        if self.then:
            self.then(count)


def _run_start(*, full: bool) -> ReindexRun:
    kept = ReindexRun.objects.values_list("pk", flat=True)[: RUNS_KEPT - 1]
    ReindexRun.objects.exclude(pk__in=list(kept)).delete()
    return ReindexRun.objects.create(full=full)


def _run_finish(*, run: ReindexRun, summary: ReindexSummary) -> None:
    stopped = summary.scanned < run.articles_total  # the process is shutting down
    outcome = ReindexRun.Outcome.STOPPED if stopped else ReindexRun.Outcome.DONE
    _run_close(run, outcome=outcome, summary=summary)
    logger.log(
        logging.WARNING if stopped else logging.INFO,
        "reindex %d %s in %.1f s: %d of %d articles scanned, %d changed, %d chunks embedded, "
        "%d unpublished removed",
        run.pk, "stopped" if stopped else "finished", summary.seconds, summary.scanned,
        run.articles_total, summary.changed, summary.embedded, summary.removed,
        extra={"fields": _fields(run, outcome=outcome.value, seconds=round(summary.seconds, 1))},
    )  # fmt: skip


def _run_fail(*, run: ReindexRun, exc: BaseException, seconds: float) -> None:
    interrupted = isinstance(exc, KeyboardInterrupt | SystemExit)
    outcome = ReindexRun.Outcome.STOPPED if interrupted else ReindexRun.Outcome.FAILED
    error = f"{type(exc).__name__}: {exc}"[:2000]
    try:
        run.refresh_from_db(fields=["articles_scanned"])
        _run_close(run, outcome=outcome, error=error)
    except DatabaseError:
        pass  # the database failed the run: the line below says so all the same
    logger.log(
        logging.WARNING if interrupted else logging.ERROR,
        "reindex %d %s after %.1f s: %d of %d articles scanned; %s",
        run.pk, "interrupted" if interrupted else "failed", seconds, run.articles_scanned,
        run.articles_total, error,
        extra={"fields": _fields(run, outcome=outcome.value, seconds=round(seconds, 1))},
    )  # fmt: skip


def _run_close(
    run: ReindexRun,
    *,
    outcome: ReindexRun.Outcome,
    summary: ReindexSummary | None = None,
    error: str = "",
) -> None:
    run.outcome, run.error, run.finished_at = outcome, error, timezone.now()
    run.progress_at = run.finished_at
    if summary is not None:
        run.articles_scanned = summary.scanned
        run.articles_changed = summary.changed
        run.chunks_embedded = summary.embedded
    run.save()


def _fields(run: ReindexRun, **more: Any) -> dict[str, Any]:
    return {"reindex_run": run.pk, "full": run.full, **more}


# A run renews its row after each article (seconds each): one silent this long was killed.
SILENT_SECONDS = 300


def reindex_run_latest() -> tuple[ReindexRun, str] | None:
    """The latest run and its state: its outcome, or `lost` for a `running` one silent for
    SILENT_SECONDS (its process was killed, or hangs); None before the first run."""
    run = ReindexRun.objects.first()
    if run is None:
        return None
    state = run.outcome
    silent = (timezone.now() - run.progress_at).total_seconds()
    if state == ReindexRun.Outcome.RUNNING and silent > SILENT_SECONDS:
        state = "lost"
    return run, state


def reindex_run_last_done_at() -> float | None:
    """When the latest run that finished every article did (Unix time); None if none did."""
    done = ReindexRun.objects.filter(outcome=ReindexRun.Outcome.DONE).order_by("-finished_at")
    finished = done.values_list("finished_at", flat=True).first()
    return finished.timestamp() if finished else None
