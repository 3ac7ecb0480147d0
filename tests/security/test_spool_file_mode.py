"""A turn spooled during a database outage is readable by the server's user only.

A turn the database cannot take waits in the spool as JSON, with the visitor's session key
(the cookie itself: a signed-in editor's is their admin session), the question and the
answer. The file was written with the process's umask, 0644 in a 0755 directory, so any local
user could read it and sign in as that editor, the threat "The local cluster's Redis" and
"Worker ports on loopback" close for the other places a secret lives. A live server spools a
real turn through a real outage here, and the file's mode is read while the outage lasts.
"""

import asyncio
import stat
import time
import uuid
from pathlib import Path

import pytest

from agent.services import SPOOL_NAME
from config.sessions import session_digest
from testing_support.model_server import text_response
from tests.agent.test_persistence import database_outage  # noqa: F401 - a fixture
from tests.security.clients import ws_events, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


async def ask_through_an_outage(server, outage, key: str) -> list[dict]:
    """A question whose turn starts with the database up; it goes down before the answer."""
    socket = await ws_open(server, cookie=key)
    try:
        await socket.send('{"type": "message", "content": "Will this answer be kept?"}')
        start = await ws_first(socket)
        assert start["type"] == "start", start
        outage.begin()  # the model answers two seconds in: its save finds no database
        return await ws_events(socket, timeout=30)
    finally:
        await socket.close()


def spooled(path: Path, key: str, deadline: float = 30.0) -> str:
    """The spool's text once it holds `key`, the visitor's session digest (saves retry before
    they spool)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        text = path.read_text() if path.exists() else ""
        if key in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"nothing spooled in {path}")


def test_a_spooled_turn_is_readable_by_its_owner_only(
    serve,
    scripted,
    database_outage,  # noqa: F811
    tmp_path,
):
    scripted.enqueue(text_response(["Kept in the spool."], first_delay=2))
    server = serve("spool-mode", AGENT_SAVE_RETRIES="1", **model_env(scripted))
    key = uuid.uuid4().hex  # 32 of [a-z0-9], as the site's own session keys
    spool = tmp_path / "spool-spool-mode" / SPOOL_NAME

    try:
        events = asyncio.run(ask_through_an_outage(server, database_outage, key))
        assert events[-1]["type"] == "done", events[-1]
        text = spooled(spool, session_digest(key))
        mode = stat.S_IMODE(spool.stat().st_mode)
    finally:
        database_outage.end()

    assert "Will this answer be kept?" in text  # what a local user could read
    assert mode & 0o077 == 0, oct(mode)  # before: 0o644


def test_a_spool_file_of_another_owner_is_still_written(settings, tmp_path, monkeypatch):
    # A shared spool this user may write but not chmod (another user's file, group-writable):
    # the turn is appended all the same, never lost over its mode.
    from agent import services

    settings.AGENT_SPOOL_DIR = str(tmp_path)
    path = tmp_path / SPOOL_NAME
    path.write_text("")
    path.chmod(0o664)

    def refused(descriptor: int, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(services.os, "fchmod", refused)
    written = services._spool_write('{"turn_id": "kept"}')

    assert written == path and "kept" in path.read_text()
