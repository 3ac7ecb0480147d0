"""A job whose worker died is put back, once; one whose twin already waits is closed instead.

Against the real job table (procrastinate's own procedures), not the in-memory queue: the
fault is PostgreSQL's unique index on a waiting job's queueing lock.
"""

from types import SimpleNamespace

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from procrastinate.contrib.django import app
from procrastinate.contrib.django.django_connector import DjangoConnector

from docent.tasks import jobs_stalled_retry

pytestmark = pytest.mark.django_db(transaction=True)


def _defer(queueing_lock: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW('index', 'blog.reindex_scan', 10,"
            " 'index', %s, '{}', NULL)::procrastinate_job_to_defer_v1])",
            [queueing_lock],
        )
        return cursor.fetchone()[0][0]


def _run_by_a_dead_worker(job_id: int) -> None:
    # A worker that stopped heartbeating (kill -9) left its job `doing`; no worker row at all
    # counts the same for procrastinate's stalled-job query.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", [job_id])


def _statuses(*job_ids: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, status FROM procrastinate_jobs WHERE id = ANY(%s)", [list(job_ids)]
        )
        found = dict(cursor.fetchall())
    # Read last: the connection of sync_to_async's thread would outlive the test database,
    # whose teardown then finds "1 other session".
    connection.close()
    return [found[job_id] for job_id in job_ids]


async def _retry_stalled() -> None:
    with app.replace_connector(DjangoConnector()):
        await jobs_stalled_retry.func(SimpleNamespace(app=app), timestamp=0)


@pytest.fixture
def lock(request):
    # The job table is not a Django model's: rows outlive a test, so each test has its own
    # lock and removes its jobs after it (a later test counts the queue's jobs).
    lock = f"reindex-scan-{request.node.name}"
    yield lock
    jobs_remove(lock)


def jobs_remove(queueing_lock: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM procrastinate_events WHERE job_id IN"
            " (SELECT id FROM procrastinate_jobs WHERE queueing_lock = %s)",
            [queueing_lock],
        )
        cursor.execute("DELETE FROM procrastinate_jobs WHERE queueing_lock = %s", [queueing_lock])
    connection.close()


async def test_a_stalled_job_is_put_back_in_the_queue(lock):
    stalled = await sync_to_async(_defer)(lock)
    await sync_to_async(_run_by_a_dead_worker)(stalled)

    await _retry_stalled()

    assert await sync_to_async(_statuses)(stalled) == ["todo"]


async def test_a_stalled_job_whose_twin_already_waits_is_closed_instead_of_failing_each_minute(
    caplog, lock
):
    # A restart's release step queued a new scan while the dead worker's scan was `doing`:
    # putting that one back would break the unique queueing lock, every minute, for ever.
    stalled = await sync_to_async(_defer)(lock)
    await sync_to_async(_run_by_a_dead_worker)(stalled)
    waiting = await sync_to_async(_defer)(lock)

    await _retry_stalled()
    await _retry_stalled()  # the next minute finds nothing left to do

    assert await sync_to_async(_statuses)(stalled, waiting) == ["failed", "todo"]
    assert "the same job already waits" in caplog.text
