"""Red team 37: a killed turn's recovery writes nothing of the visitor's into its log lines.

The recovery (agent.tasks.turns_recover_periodic) says each interrupted turn in a WARNING with
its worker, and hangs a span under the turn's checkpointed root span id (Turn.root_span_id,
this stop). A visitor whose question carries a forged log line, a line separator and an
escape sequence, asked on a worker killed mid-answer, finds none of it in the recovery's lines:
they hold only what the server wrote (ids, the worker's name), and the root span id is the
span's own 16 hex digits. Held on the first run (no hole found).
"""

import asyncio
import json
import logging
import re
import time

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from agent.models import Turn
from agent.tasks import turns_recover_periodic
from testing_support.model_server import text_response
from tests.ops.otlp_receiver import OTLPReceiver
from tests.security.clients import ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

FORGED = "2026-12-07 00:00:00,000 ERROR agent.tasks: forged"
QUESTION = f"Why?\n{FORGED}\u2028{FORGED}\x1b[2K\x1b]0;title\x07"
PIECES = ["word "] * 20


@database_sync_to_async
def _checkpointed() -> Turn | None:
    turn = Turn.objects.first()
    return turn if turn is not None and turn.answer == "".join(PIECES) else None


@pytest.fixture
def receiver():
    with OTLPReceiver() as running:
        yield running


async def test_a_recovered_turns_lines_hold_nothing_of_the_visitors(
    serve, scripted, redis_url, receiver, caplog
):
    scripted.enqueue(text_response(PIECES, hold=True))  # streams, then hangs mid-answer
    worker = serve(
        "recovered-lines",
        REDIS_URL=redis_url,
        AGENT_CHECKPOINT_SECONDS="0.3",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
        **model_env(scripted),
    )
    socket = await ws_open(worker)
    await socket.send(json.dumps({"type": "message", "content": QUESTION}))
    assert (await ws_first(socket))["type"] == "start"
    deadline = time.monotonic() + 30
    while (turn := await _checkpointed()) is None:
        assert time.monotonic() < deadline, "the answer was never checkpointed"
        await asyncio.sleep(0.1)
    worker.process.kill()  # SIGKILL: no settlement, no save
    worker.process.wait()

    caplog.set_level(logging.INFO)
    with override_settings(AGENT_LEASE_SECONDS=1, REDIS_URL=redis_url):
        await asyncio.sleep(1.5)
        await turns_recover_periodic(timestamp=0)

    await turn.arefresh_from_db()
    said = [record.getMessage() for record in caplog.records]
    assert turn.status == "interrupted"
    assert any("turn interrupted" in line for line in said), said
    assert not [line for line in said if "forged" in line or re.search(r"[\x00-\x1f\u2028]", line)]
    assert re.fullmatch(r"[0-9a-f]{16}", turn.root_span_id), turn.root_span_id
    assert re.fullmatch(r"[0-9a-f]{32}", turn.trace_id), turn.trace_id
