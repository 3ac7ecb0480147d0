"""The assistant's queued jobs (agent/tasks.py), called as the task worker runs them."""

import pytest

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
