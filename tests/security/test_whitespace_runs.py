"""A run of spaces in a question must not stop the web process.

The offline model reads a whole message against patterns with runs that all take spaces: the
greeting check (`offline_overview._WHOLE`: "hi", 3,980 tabs and a question, minutes of CPU)
and the "what is X?" check (`offline_definitions._BARE`: "ok", 3,980 spaces and "x", 6.9
CPU-seconds). A regular expression holds the GIL while it runs, so for that time the process
answered nobody, not even /healthz: one message an address may send thirty times a minute.
Four at once here: about 28 s of a stopped process before, for the "what is X?" check alone.
"""

import asyncio

import httpx
import pytest
from channels.db import database_sync_to_async

from tests.security.clients import published_indexed, ws_answer

pytestmark = pytest.mark.django_db(transaction=True)

RUN = 3980  # the rest of a 4,000-character message
AT_ONCE = 4  # sockets sending it together, within an address's running turns (6)
MESSAGES = ["hi" + "\t" * RUN + "what is hnsw?", "ok" + " " * RUN + "x"]


BODY = (
    "The ok field of a tool call says whether it succeeded. When ok is false, the error "
    "field says why, and the x field is empty."
)


@database_sync_to_async
def publish_indexed() -> None:
    # The "what is X?" check reads a question once its search has found something.
    published_indexed(title="The ok field", slug="ok-field", summary="What ok says.", body=BODY)


@pytest.mark.parametrize("message", MESSAGES, ids=["greeting", "bare-name"])
async def test_a_run_of_spaces_leaves_the_process_answering(serve, message):
    await publish_indexed()
    server = serve("whitespace-runs")

    attack = asyncio.gather(*(ws_answer(server, message) for _ in range(AT_ONCE)))
    await asyncio.sleep(0.5)  # the attack's turn is planning by now
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        health = await client.get("/healthz")
    visitor = await ws_answer(server, "what is hnsw?")
    answers = await attack

    assert health.status_code == 200
    assert visitor[-1]["type"] == "done"
    assert [answer[-1]["type"] for answer in answers] == ["done"] * AT_ONCE
