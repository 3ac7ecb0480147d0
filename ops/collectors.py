"""Metrics read at scrape time: the database (the same answer from every worker), whether Redis
answers, and this host's spool."""

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Min
from django.utils import timezone
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily

# The queues the tasks are declared on (blog/tasks.py, agent/tasks.py, docent/tasks.py) and the
# statuses reported: each always has a sample, so an alert's delta() sees the first failed job
# (a series that appears at 1 has no change to show).
QUEUES = ("index", "maintenance")
STATUSES = ("todo", "doing", "failed")
# A procrastinate worker renews its heartbeat every 10 s: one silent for three of them is not
# counted alive. At the stalled-job rule's 60 s, a killed worker's row was counted beside its
# replacement's for up to a minute (2 for 1); the row itself stays until that rule removes it.
WORKER_HEARTBEAT_SECONDS = 30


class IndexLagCollector:
    """How far the search index is behind the published articles.

    Read from the articles themselves rather than counted by the indexing worker, so it is
    right whichever process (or queue) does the indexing, and after any restart.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from blog.selectors import article_list_unindexed

        stale = article_list_unindexed()  # the panel's rule, so both say the same
        oldest = stale.aggregate(oldest=Min("updated_at"))["oldest"]
        pending = stale.count()
        lag = (timezone.now() - oldest).total_seconds() if oldest else 0.0
        yield GaugeMetricFamily(
            "docent_indexing_lag_seconds",
            "Age of the oldest published change not yet in the search index (0: up to date).",
            value=max(lag, 0.0),
        )
        yield GaugeMetricFamily(
            "docent_indexing_pending_articles",
            "Published articles whose search index is missing or older than the article.",
            value=pending,
        )


class QueueCollector:
    """The task queue: jobs piling up, the oldest one waiting, jobs that failed for good,
    and whether any task worker is alive. The worker cannot report its own death."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from docent.selectors import queue_state

        state = queue_state(heartbeat_seconds=WORKER_HEARTBEAT_SECONDS)
        jobs = GaugeMetricFamily(
            "docent_queue_jobs",
            "Jobs in the task queue by queue and status (todo: waiting or retrying, doing: "
            "running, failed: gave up after every retry and kept for a person to read).",
            labels=["queue", "status"],
        )
        queues = sorted({*QUEUES, *(queue for queue, _ in state.jobs)})
        for queue in queues:
            for status in STATUSES:
                jobs.add_metric([queue, status], state.jobs.get((queue, status), 0))
        yield jobs
        waiting = GaugeMetricFamily(
            "docent_queue_oldest_waiting_seconds",
            "How long the oldest due job of each queue has waited for a worker (absent: none).",
            labels=["queue"],
        )
        for queue, seconds in sorted(state.oldest_waiting.items()):
            waiting.add_metric([queue], seconds)
        yield waiting
        yield GaugeMetricFamily(
            "docent_queue_workers",
            f"Task workers whose heartbeat is under {WORKER_HEARTBEAT_SECONDS} s old.",
            value=state.workers_alive,
        )


REINDEX_STATES = ("running", "done", "failed", "stopped", "lost")


# Past this many chunks the gauge reads PostgreSQL's own estimate (pg_class.reltuples, renewed
# by ANALYZE and autovacuum) instead of counting: at 100,000 chunks (374 MB) a count took
# 21.7 ms of the database at every scrape of every process, the estimate 1.4 ms.
CHUNKS_ESTIMATED_FROM = 10_000


def _chunk_count(chunk_model: Any) -> int:
    """The chunks in the index: estimated once there are many, counted while few (or never
    analyzed: reltuples is -1 then)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
            [chunk_model._meta.db_table],
        )
        row = cursor.fetchone()
    estimate = row[0] if row else -1
    return estimate if estimate >= CHUNKS_ESTIMATED_FROM else chunk_model.objects.count()


class ReindexCollector:
    """`manage.py reindex`, run in a process of its own, as its row says (blog.reindex_runs).

    Absent until the first run. `docent_index_chunks` is always there: the index's size.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from blog.models import Chunk
        from blog.reindex_runs import reindex_run_last_done_at, reindex_run_latest

        yield GaugeMetricFamily(
            "docent_index_chunks",
            f"Chunks in the search index (past {CHUNKS_ESTIMATED_FROM:,}, PostgreSQL's estimate "
            "as of its last ANALYZE).",
            value=_chunk_count(Chunk),
        )
        latest = reindex_run_latest()
        if latest is None:
            return
        run, current = latest
        state = GaugeMetricFamily(
            "docent_reindex_state",
            "The latest manage.py reindex: 1 for its state (lost: running, but silent for "
            "5 minutes: killed or hung).",
            labels=["state"],
        )
        for name in REINDEX_STATES:
            state.add_metric([name], int(name == current))
        yield state
        articles = GaugeMetricFamily(
            "docent_reindex_articles",
            "The latest manage.py reindex's articles: to scan (total), scanned so far, changed.",
            labels=["progress"],
        )
        for name, count in (
            ("total", run.articles_total),
            ("scanned", run.articles_scanned),
            ("changed", run.articles_changed),
        ):
            articles.add_metric([name], count)
        yield articles
        yield GaugeMetricFamily(
            "docent_reindex_chunks_embedded",
            "Chunks the latest manage.py reindex embedded (counted as it ends).",
            value=run.chunks_embedded,
        )
        end = run.finished_at or timezone.now()
        yield GaugeMetricFamily(
            "docent_reindex_seconds",
            "How long the latest manage.py reindex took, or has run so far.",
            value=max((end - run.started_at).total_seconds(), 0.0),
        )
        done_at = reindex_run_last_done_at()
        if done_at is not None:
            yield GaugeMetricFamily(
                "docent_reindex_last_success_timestamp_seconds",
                "When the latest manage.py reindex that scanned every article ended (Unix time).",
                value=done_at,
            )


class DatabaseCollector:
    """Everything read from the database at scrape time, and whether it could be read.

    With the database down the gauges above are left out (not reported as 0: a lag of 0
    would say "up to date"), and `docent_database_up` says why they are missing.
    """

    parts = (IndexLagCollector(), QueueCollector(), ReindexCollector())

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = []
        try:
            for part in self.parts:
                families += list(part.collect())
            up = 1
        except DatabaseError:
            connection.close()  # the next scrape reconnects instead of reusing a dead socket
            families, up = [], 0
        yield GaugeMetricFamily(
            "docent_database_up",
            "1 when this scrape could read the database, 0 when it could not.",
            value=up,
        )
        yield from families


class SpoolCollector:
    """Turns waiting in this host's spool for the database, read from disk at scrape time.

    `docent_turns_spooled_total` says turns were spooled; only this says whether they have all
    been saved since (the web process replays every 15 s, the task worker every minute). Per
    host, like the spool: each process of one host reports the same file. Whether the spool can
    be written is asked too: with the database down, a turn it cannot take is lost.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from agent.services import spool_waiting, spool_writable

        writable = spool_writable()
        yield GaugeMetricFamily(
            "docent_spool_writable",
            "1 when this scrape could write a byte to the spool (AGENT_SPOOL_DIR), 0 when not: "
            "a turn the database refuses is then lost.",
            value=int(writable),
        )
        try:
            waiting = spool_waiting()
        except OSError:
            return  # left out, not 0: spool_writable says why
        yield GaugeMetricFamily(
            "docent_turns_spool_waiting",
            "Turns in this host's spool (AGENT_SPOOL_DIR) not saved to the database yet.",
            value=waiting,
        )


class RedisCollector:
    """Whether this process reaches Redis (`REDIS_URL`), asked at scrape time.

    Rate limits, budgets, turn locks and the channel layer live there: with it down every chat
    message is refused `unavailable` before a turn starts, so no turn counter moves; this says
    why. Absent without `REDIS_URL` (one process, nothing shared to lose).
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        url = settings.REDIS_URL
        if not url:
            return
        up = _redis_ping(url)
        yield GaugeMetricFamily(
            "docent_redis_up",
            "1 when this scrape could reach Redis (REDIS_URL), 0 when it could not.",
            value=int(up),
        )
        spent = _day_spent(url) if up else None
        if spent is None:
            return
        # Without these, the day's budget showed only once spent: every visitor refused.
        yield GaugeMetricFamily(
            "docent_daily_tokens_spent",
            "Tokens the site spent or holds today (UTC) against AGENT_TOKENS_PER_DAY.",
            value=spent,
        )
        yield GaugeMetricFamily(
            "docent_daily_tokens_budget",
            "AGENT_TOKENS_PER_DAY: the site's tokens a day, every visitor's together.",
            value=settings.AGENT_TOKENS_PER_DAY,
        )
        # What one turn holds before its first call: with a budget of a few of these, the
        # last 20% was already too little for two questions at once (DocentDailyBudgetLow).
        yield GaugeMetricFamily(
            "docent_turn_tokens_reserve",
            "AGENT_TOKENS_RESERVE: tokens a turn holds on the budgets before its first call.",
            value=settings.AGENT_TOKENS_RESERVE,
        )


_redis_clients: dict[str, Any] = {}


def _redis_ping(url: str) -> bool:
    import redis

    from docent.health import REDIS_SECONDS

    client = _redis_clients.get(url)
    if client is None:
        # Bounded like /readyz's check: a Redis that hangs costs a scrape 2 s, not the scrape.
        client = _redis_clients[url] = redis.Redis.from_url(
            url, socket_timeout=REDIS_SECONDS, socket_connect_timeout=REDIS_SECONDS
        )
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def _day_spent(url: str) -> int | None:
    import redis

    from agent.ratelimit import daily_budget_key  # here: agent.ratelimit imports ops.metrics

    client = _redis_clients[url]
    try:
        # Today by Redis's clock, as the turns charge it: by each process's own, a scrape
        # through the proxy read the ended day's total or the new day's, by the worker it hit.
        seconds, _ = client.time()
        return int(client.get(daily_budget_key(now=seconds)) or 0)
    except (redis.RedisError, ValueError):
        return None


def scrape_registry() -> CollectorRegistry:
    """Every gauge read at scrape time, for /metrics to add to the counted ones."""
    registry = CollectorRegistry(auto_describe=False)
    for collector in (DatabaseCollector(), RedisCollector(), SpoolCollector()):
        registry.register(collector)
    return registry
