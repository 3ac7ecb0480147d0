"""Queued jobs that keep the queue, the turn records and the sessions healthy (run by the task
worker)."""

import logging
from importlib import import_module

from asgiref.sync import sync_to_async
from django.conf import settings
from procrastinate.contrib.django import app
from procrastinate.exceptions import UniqueViolation
from procrastinate.jobs import Status

logger = logging.getLogger(__name__)

# procrastinate workers renew a heartbeat every 10 s; one silent this long has died.
STALLED_WORKER_SECONDS = settings.TASK_WORKER_STALLED_SECONDS


@app.periodic(cron="* * * * *", periodic_id="stalled")
@app.task(name="docent.jobs_stalled_retry", queue="maintenance", pass_context=True)
async def jobs_stalled_retry(context, timestamp: int) -> None:
    """Every minute: put back the jobs of a worker that died mid-job (kill -9, lost machine)."""
    manager = context.app.job_manager
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_WORKER_SECONDS):
        try:
            await manager.retry_job(job)
        except UniqueViolation:
            # A twin with its queueing lock already waits (a restart's release queued a new
            # reindex scan meanwhile). Putting this one back would fail here every minute, for
            # ever; the waiting one does the same work, so this run is closed as failed.
            logger.warning(
                "closing job %s (%s): its worker stopped and the same job already waits",
                job.id,
                job.task_name,
            )
            await manager.finish_job(job, status=Status.FAILED, delete_job=False)
        else:
            logger.warning("retrying job %s (%s): its worker stopped", job.id, job.task_name)
    await workers_lost_forget(manager)


async def workers_lost_forget(manager) -> None:
    """Remove the rows of workers that died without unregistering, and say so.

    A worker killed (kill -9, out of memory) leaves its row: `docent_queue_workers` counted it
    for a minute beside its replacement (2 for 1), nothing counted the death, and procrastinate
    prunes such rows only when a worker starts, after 30 s of silence, which a supervisor's
    restart 1 s later never reaches. A worker starting runs it too (`docent.startup`), before
    procrastinate's own prune would remove a row silent that long without a word.
    """
    from ops.metrics import task_workers_lost_count

    lost = await manager.prune_stalled_workers(STALLED_WORKER_SECONDS)
    for worker_id in lost:
        logger.warning(
            "task worker %s died without stopping (killed, out of memory, or its host lost): "
            "its heartbeat was silent for over %d s; jobs it ran were put back",
            worker_id,
            STALLED_WORKER_SECONDS,
        )
    task_workers_lost_count(len(lost))


@app.periodic(cron="17 * * * *", periodic_id="prune")
@app.task(name="docent.jobs_prune", queue="maintenance", pass_context=True)
async def jobs_prune(context, timestamp: int) -> None:
    """Every hour: delete jobs that succeeded more than TASK_JOBS_KEEP_HOURS ago.

    The periodic jobs alone (recovery every 15 s, spool and stalled checks every minute) add
    about 8,600 rows a day, which the job table and its admin list kept forever. Failed jobs
    stay for someone to read.
    """
    await context.app.job_manager.delete_old_jobs(nb_hours=settings.TASK_JOBS_KEEP_HOURS)


@app.periodic(cron="47 * * * *", periodic_id="sessions")
@app.task(name="docent.sessions_clear_expired", queue="maintenance")
async def sessions_clear_expired(timestamp: int) -> None:
    """Every hour: delete the sessions past their expiry, as `manage.py clearsessions` does.

    Django never deletes them itself. Every visitor's first chat message writes one, and one
    address may open one a minute per message it may send: the table only grew.
    """
    store = import_module(settings.SESSION_ENGINE).SessionStore
    await sync_to_async(store.clear_expired)()
