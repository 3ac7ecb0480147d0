"""An emoji whose UTF-16 halves come in two chunks reaches the reader whole.

A server that slices its text as UTF-16 (JavaScript's strings) may end a chunk with an emoji's
high half, escaped as `\\ud83d`, and start the next with the low half. Each chunk was scrubbed
alone, and the reader got two U+FFFD for the emoji, in the answer shown and the one saved
(red team 35). A half that no chunk completes is still one U+FFFD.
"""

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import text_response
from testing_support.waits import wait_until
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


async def test_halves_in_two_chunks_are_one_emoji(serve, scripted):
    pieces = ["Graphs \ud83d", "\ude00 and queues ", "\ud83d", "\udc4d. Lone \udc4d, end \ud83d"]
    scripted.enqueue(text_response(pieces, delay=0.02))  # a chunk a read
    server = serve("split-surrogates", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "What is HNSW?")
    await socket.close()

    assert events[-1]["type"] == "done", events[-1]
    shown = "".join(event["content"] for event in events if event["type"] == "text")
    # before: 😀 and 👍 as two U+FFFD each
    assert shown == "Graphs 😀 and queues 👍. Lone \ufffd, end \ufffd"
    saved = Turn.objects.filter(index=1).exclude(status="running")
    await database_sync_to_async(wait_until)(saved.exists, "the turn is saved")
    assert (await database_sync_to_async(saved.get)()).answer == shown
