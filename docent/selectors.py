"""Project-wide reads that belong to neither app."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import BigIntegerField, OuterRef, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from blog.models import Article


def admin_account_missing() -> bool:
    """True until someone can sign in to the admin (an active staff account exists)."""
    return not get_user_model().objects.filter(is_staff=True, is_active=True).exists()


@dataclass(frozen=True)
class QueueState:
    """The task queue as the operator sees it (procrastinate's own tables)."""

    jobs: dict[tuple[str, str], int]  # (queue, status) -> jobs, for todo, doing and failed
    oldest_waiting: dict[str, float]  # queue -> seconds the oldest due `todo` job has waited
    workers_alive: int  # workers whose heartbeat is recent


# Succeeded and cancelled jobs are history (pruned hourly); these three say what is wrong.
_QUEUE_SQL = """
SELECT j.queue_name, j.status::text, count(*),
       max(extract(epoch FROM now() - coalesce(j.scheduled_at, e.at)))
         FILTER (WHERE j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now()))
FROM procrastinate_jobs j
LEFT JOIN LATERAL (
    SELECT max(at) AS at FROM procrastinate_events WHERE job_id = j.id
) e ON j.status = 'todo'
WHERE j.status IN ('todo', 'doing', 'failed')
GROUP BY 1, 2
"""
_WORKERS_SQL = "SELECT count(*) FROM procrastinate_workers WHERE last_heartbeat > now() - %s"


def queue_state(*, heartbeat_seconds: float) -> QueueState:
    """Jobs by queue and status, how long the oldest due job waits, and the live workers.

    A `todo` job waits from its scheduled time, else from its last event (queued, or put back
    for a retry); one scheduled in the future (a retry's back-off) is not waiting yet.
    """
    jobs: dict[tuple[str, str], int] = {}
    oldest: dict[str, float] = {}
    with connection.cursor() as cursor:
        cursor.execute(_QUEUE_SQL)
        for queue, status, count, waited in cursor.fetchall():
            jobs[(queue, status)] = count
            if waited is not None:
                oldest[queue] = max(float(waited), 0.0)
        cursor.execute(_WORKERS_SQL, [timedelta(seconds=heartbeat_seconds)])
        (workers,) = cursor.fetchone()
    return QueueState(jobs=jobs, oldest_waiting=oldest, workers_alive=workers)


def job_list_annotate(*, queryset: QuerySet) -> QuerySet:
    """Jobs with `article_title`: the title of the article an `article_id` argument names.

    None when the job names no article, or names one deleted since (one subquery, not a query
    per row).
    """
    article_id = Cast(KT("args__article_id"), BigIntegerField())
    title = Article.objects.filter(pk=OuterRef("article_id")).values("title")[:1]
    return queryset.alias(article_id=article_id).annotate(article_title=Subquery(title))
