"""The chat socket's session comes from its cookie, and frames skip Channels' session check."""

import pytest
from channels.db import database_sync_to_async
from channels.sessions import InstanceSessionWrapper
from django.contrib.sessions.models import Session

from agent.models import Conversation
from agent.shared import state_reset
from config.sessions import session_digest
from testing_support.model_server import ScriptedOpenAIServer, text_response
from tests.agent.chat_helpers import HOST, ORIGIN, ask, connect, text_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scripted(settings, tmp_path):
    with ScriptedOpenAIServer() as server:
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.base_url, "test-key"
        settings.AGENT_MODEL, settings.AGENT_SPOOL_DIR = "scripted-model", str(tmp_path)
        state_reset()
        yield server
    state_reset()


async def test_frames_go_out_without_channels_session_wrapper(scripted, monkeypatch):
    async def checks_the_session(self, message):
        raise AssertionError("a WebSocket frame went through the session wrapper")

    monkeypatch.setattr(InstanceSessionWrapper, "send", checks_the_session)
    scripted.enqueue(text_response(["Five ", "steps."]))
    socket = await connect()

    events = await ask(socket, "How many steps?")

    assert text_of(events) == "Five steps." and events[-1]["type"] == "done"
    await socket.disconnect()


async def test_the_cookies_session_still_owns_the_conversation(scripted):
    key = "k" * 32
    scripted.enqueue(text_response(["Hi."]))
    socket = await connect(headers=[ORIGIN, HOST, (b"cookie", f"sessionid={key}".encode())])

    events = await ask(socket, "Hello?")

    assert events[-1]["type"] == "done"
    conversation = await database_sync_to_async(Conversation.objects.get)()
    assert conversation.session_key == session_digest(key)  # never the cookie
    assert await database_sync_to_async(Session.objects.filter(session_key=key).exists)()
    await socket.disconnect()
