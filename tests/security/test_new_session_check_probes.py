"""Red team 37: the check made before a new visitor's session row (agent.turns
message_check_new_session), beyond red team 36's unknown page and nobody's conversation.

A new visitor naming another reader's real conversation, a conversation its own reader
deleted, a draft's or a scheduled post's slug, or a slug of LIKE wildcards is refused
`bad_request` with no session row written, and the check is one indexed look-up each (an
exact slug, a primary key). Held on the first run (no hole found).
"""

import asyncio
import datetime as dt
import secrets

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from agent.models import Conversation
from blog.models import Article
from tests.security.clients import rows, sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_new_visitor_cannot_pass_the_check_with_real_looking_names(serve, make_article):
    @database_sync_to_async
    def setup() -> tuple[str, str]:
        make_article(title="Step limits", slug="step-limits")
        make_article(title="Draft", slug="draft-post", status=Article.Status.DRAFT)
        make_article(
            title="Later", slug="later-post", published_at=timezone.now() + dt.timedelta(days=3)
        )
        theirs = Conversation.objects.create(session_key="d" * 64)
        deleted = Conversation.objects.create(session_key="e" * 64, hidden_at=timezone.now())
        return str(theirs.pk), str(deleted.pk)

    theirs, deleted = await setup()
    server = serve("new-session-check")
    junk = [
        {"content": "hello", "conversation_id": theirs},
        {"content": "hello", "conversation_id": deleted},
        {"content": "hello", "page": "draft-post"},
        {"content": "hello", "page": "later-post"},
        {"content": "hello", "page": "%" * 200},
        {"content": "hello", "page": "step-%"},
    ]
    page_key = secrets.token_hex(16)

    over_sse = [
        (await asyncio.to_thread(sse_post, server, body, cookies=cookies))[1][0]
        for body in junk
        for cookies in (None, {"sessionid": page_key})
    ]
    over_ws = []
    for cookie in (None, page_key):
        socket = await ws_open(server, cookie=cookie)
        over_ws += [(await ws_ask(socket, **body))[-1] for body in junk]
        await socket.close()

    assert [event.get("code") for event in over_sse + over_ws] == ["bad_request"] * 24
    assert await rows("sessions.Session") == 0
    assert await rows("agent.Conversation") == 2  # nothing started, nothing taken over
