"""Finished jobs do not pile up: the hourly prune deletes those that succeeded long ago."""

import datetime
from types import SimpleNamespace

from procrastinate import utils
from procrastinate.contrib.django import app

from docent.tasks import jobs_prune


async def test_jobs_that_succeeded_long_ago_are_deleted_and_the_rest_are_kept(task_queue, settings):
    settings.TASK_JOBS_KEEP_HOURS = 72
    job = app.configure_task("docent.jobs_stalled_retry")
    ids = {name: await job.defer_async(timestamp=n) for n, name in enumerate(
        ("old success", "new success", "old failure", "waiting"))}  # fmt: skip
    long_ago = utils.utcnow() - datetime.timedelta(hours=73)
    for name, status, at in [
        ("old success", "succeeded", long_ago),
        ("new success", "succeeded", utils.utcnow()),
        ("old failure", "failed", long_ago),
    ]:
        task_queue.jobs[ids[name]]["status"] = status
        for event in task_queue.events[ids[name]]:
            event["at"] = at

    await jobs_prune.func(SimpleNamespace(app=app), timestamp=0)

    kept = {name for name, job_id in ids.items() if job_id in task_queue.jobs}
    assert kept == {"new success", "old failure", "waiting"}


def test_the_prune_runs_every_hour_on_the_maintenance_queue():
    periodic = {task.periodic_id: task for task in app.periodic_registry.periodic_tasks.values()}
    prune = periodic["prune"]
    assert (prune.task.name, prune.task.queue, prune.cron) == (
        "docent.jobs_prune",
        "maintenance",
        "17 * * * *",
    )
