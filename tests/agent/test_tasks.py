"""The assistant's queued jobs (agent/tasks.py), called as the task worker runs them."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from agent import tasks

pytestmark = pytest.mark.django_db


def test_the_spool_drain_says_once_that_the_spool_cannot_be_written_and_again_when_it_can(
    settings, tmp_path, caplog, monkeypatch
):
    """A full or broken spool disk showed only as docent_spool_writable 0 (found by its
    scrape): no line said it until the next database outage lost a turn."""
    monkeypatch.setattr(tasks, "_spool_said", [""])
    in_the_way = tmp_path / "a-file"  # the spool's mount gone wrong: its path runs into a file
    in_the_way.write_text("")
    broken = in_the_way / "spool"
    settings.AGENT_SPOOL_DIR = str(broken)
    tasks.spool_drain(timestamp=0)
    tasks.spool_drain(timestamp=60)  # said once, not every minute
    settings.AGENT_SPOOL_DIR = str(tmp_path / "spool")
    tasks.spool_drain(timestamp=120)

    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "agent.tasks"]
    assert said == [
        (
            "ERROR",
            f"the spool {broken} cannot be written (Not a directory: {broken}): a database "
            "outage now would lose turns instead of spooling them; free space on its disk or "
            "fix AGENT_SPOOL_DIR",
        ),
        ("WARNING", f"the spool {tmp_path / 'spool'} can be written again"),
    ]


@pytest.mark.django_db(transaction=True)
def test_the_recovery_runs_again_once_a_restarted_database_is_back():
    """The recovery read the database from a pool thread whose connection nothing closed: a
    database restart killed it, and every run after failed ('terminating connection due to
    administrator command', then 'the connection is closed'), a traceback each 15 s and the
    dead workers' turns left `running` (walk 24, `make run` with its PostgreSQL restarted)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        [[test_pid]] = cursor.fetchall()

    def restart() -> None:
        # Every other connection of the test database cut, the pool thread's among them.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname ="
                " current_database() AND pid <> pg_backend_pid() AND pid <> %s",
                [test_pid],
            )
        connection.close()

    async def runs(times: int) -> None:
        # One pool thread, as a quiet worker's pool reuses the same one.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        await tasks.turns_recover_periodic(timestamp=0)
        cutter = threading.Thread(target=restart)
        cutter.start()
        cutter.join()
        for _ in range(times):
            await tasks.turns_recover_periodic(timestamp=0)

    asyncio.run(runs(2))  # raised OperationalError at the first run after the restart
