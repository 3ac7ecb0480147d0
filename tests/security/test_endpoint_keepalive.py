"""An endpoint that only keeps the stream alive must not hold a turn for ever.

Keep-alive comments (": ping", as proxies and some routers send while a model thinks) reset
the silence timer, AGENT_MODEL_TIMEOUT. A stream of nothing else kept the turn running, its
conversation locked and its socket "busy", for as long as the endpoint cared to send them.
AGENT_MODEL_CALL_SECONDS bounds a model call's whole stream.
"""

import time

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import Comment, ScriptedResponse
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_stream_of_keep_alive_comments_ends_at_the_call_deadline(serve, scripted):
    # A comment every 0.2 s for ten minutes: never quiet for the 1 s silence timeout.
    scripted.enqueue(ScriptedResponse(chunks=[Comment()] * 3000, delay=0.2))
    server = serve(
        "endpoint-keepalive",
        **model_env(scripted),
        AGENT_MODEL_TIMEOUT="1",
        AGENT_MODEL_CALL_SECONDS="2",
        AGENT_MODEL_MAX_RETRIES="0",
    )
    socket = await ws_open(server)

    started = time.monotonic()
    events = await ws_ask(socket, "Why cap the agent's steps?")
    took = time.monotonic() - started
    await socket.close()
    server.stop()

    assert events[-1]["type"] == "error" and events[-1]["code"] == "model_error", events[-1]
    assert took < 30  # the deadline, not the endpoint, ended it (ten minutes otherwise)
    [turn] = await database_sync_to_async(list)(Turn.objects.all())
    assert turn.status == "error"
