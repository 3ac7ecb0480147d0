"""A message whose turn could not start writes no session row for a new visitor.

A cookie-less client (or one with a page's key, which has no row yet) naming an unknown page or
a conversation that is nobody's passed the message check, had its session row written, and only
then was refused `bad_request`: each such request left a `django_session` row for two weeks, up
to the address's allowance of new sessions (30 a minute, its day of messages a day). The page
and the conversation are now checked before the row is written (red team 36).
"""

import asyncio
import secrets
import uuid

import pytest
from channels.db import database_sync_to_async

from tests.security.clients import rows, sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

JUNK = [
    {"content": "hello", "page": "no-such-article"},
    {"content": "hello", "conversation_id": str(uuid.uuid4())},
]


async def test_junk_from_new_visitors_writes_no_session_row(serve, make_article):
    await database_sync_to_async(make_article)(title="Step limits", slug="step-limits")
    server = serve("junk-sessions")
    page_key = secrets.token_hex(16)  # well formed, no row: what a page hands out

    over_sse = [
        (await asyncio.to_thread(sse_post, server, body, cookies=cookies))[1][0]
        for body in JUNK
        for cookies in (None, {"sessionid": page_key})
        for _ in range(3)
    ]
    over_ws = []
    for body in JUNK:
        for cookie in (None, page_key):
            socket = await ws_open(server, cookie=cookie)
            over_ws += [(await ws_ask(socket, **body))[-1] for _ in range(3)]
            await socket.close()
    junk_rows = await rows("sessions.Session")
    socket = await ws_open(server)
    answered = await ws_ask(socket, "hello", page="step-limits")  # the control: a real turn
    await socket.close()

    assert [event.get("code") for event in over_sse + over_ws] == ["bad_request"] * 24
    assert junk_rows == 0  # before: 9, one per cookie-less request or socket, one for the key
    assert answered[-1]["type"] == "done", answered[-1]
    assert await rows("sessions.Session") == 1


async def test_a_key_whose_row_expired_still_reaches_its_conversation(serve):
    # Checked before the row is written, the conversation is looked up by the cookie's key: a
    # visitor whose row the hourly job deleted goes on with their conversation, as before.
    from django.contrib.sessions.models import Session

    server = serve("junk-sessions-expired")
    key = secrets.token_hex(16)
    socket = await ws_open(server, cookie=key)
    first = await ws_ask(socket, "hello")
    await socket.close()
    await database_sync_to_async(Session.objects.all().delete)()

    socket = await ws_open(server, cookie=key)
    again = await ws_ask(socket, "hello again", conversation_id=first[0]["conversation_id"])
    await socket.close()

    assert again[0]["type"] == "start" and again[0]["turn"] == 2, again[0]
    assert again[-1]["type"] == "done", again[-1]
    assert await rows("sessions.Session") == 1
