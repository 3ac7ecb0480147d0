"""Finding 5b: reading pages writes no session; the chat writes one on the first message."""

import asyncio
import json
import secrets
import uuid

import httpx
import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.models import Session

from agent.models import Conversation
from config.sessions import session_digest
from tests.security.clients import (
    rows,
    rows_now,
    same_minute,
    session_keys,
    sse_post,
    ws_ask,
    ws_first,
    ws_open,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_hundred_cookie_less_page_views_write_no_session_row(serve, make_article):
    make_article(title="Public post", slug="public-post")
    server = serve("sessions-pages")

    minted = set()
    for _visitor in range(100):
        for path in ("/", "/articles/public-post/"):
            with httpx.Client(base_url=server.url) as client:  # no cookies: a new visitor
                response = client.get(path)
            assert response.status_code == 200
            minted.add(response.cookies["sessionid"])

    assert Session.objects.count() == 0
    assert len(minted) == 200  # each visitor still gets a key for the chat


def test_a_page_that_hands_out_a_session_key_is_not_stored_by_shared_caches(serve, make_article):
    # A CDN or proxy that cached the page with its Set-Cookie would give every later visitor
    # the same session: the same limits, and each other's conversations by id.
    make_article(title="Public post", slug="public-post")
    server = serve("sessions-cache")

    responses = [httpx.get(server.url + path) for path in ("/", "/articles/public-post/")]

    for response in responses:
        assert response.status_code == 200 and "sessionid" in response.cookies
        assert "private" in response.headers.get("Cache-Control", "")
        assert "cookie" in response.headers.get("Vary", "").lower()


async def test_a_transcript_is_marked_for_its_visitor_only(serve):
    server = serve("sessions-transcript-cache")
    socket = await ws_open(server)
    conversation = (await ws_ask(socket, "hello"))[0]["conversation_id"]
    await socket.close()
    cookie = (await session_keys())[0]

    async with httpx.AsyncClient(base_url=server.url, cookies={"sessionid": cookie}) as client:
        transcript = await client.get(f"/api/conversations/{conversation}")

    assert transcript.status_code == 200 and transcript.json()["turns"]
    assert {"private", "no-store"} <= set(
        part.strip() for part in transcript.headers.get("Cache-Control", "").split(",")
    )
    assert "cookie" in transcript.headers.get("Vary", "").lower()


async def test_the_first_websocket_message_saves_the_pages_session(serve, make_article):
    await database_sync_to_async(make_article)(title="Public post", slug="public-post")
    server = serve("sessions-ws")
    with httpx.Client(base_url=server.url) as client:
        key = client.get("/").cookies["sessionid"]
        # Reading an article loads the (still row-less) session: the key must survive it.
        article = client.get("/articles/public-post/")
        assert "sessionid" not in article.headers.get("set-cookie", "")
        assert client.cookies["sessionid"] == key
    socket = await ws_open(server, cookie=key)
    assert await rows("sessions.Session") == 0  # opening the socket writes nothing

    events = await ws_ask(socket, "hello")
    await socket.close()

    assert events[-1]["type"] == "done"
    assert await session_keys() == [key]
    conversation_id = events[0]["conversation_id"]
    with httpx.Client(base_url=server.url, cookies={"sessionid": key}) as client:
        assert client.get(f"/api/conversations/{conversation_id}").status_code == 200
    with httpx.Client(base_url=server.url, cookies={"sessionid": "x" * 32}) as client:
        assert client.get(f"/api/conversations/{conversation_id}").status_code == 404


def test_sse_without_a_cookie_creates_one_session_and_keeps_it(serve):
    server = serve("sessions-sse")

    response, events = sse_post(server, {"content": "hello"})
    key = response.cookies["sessionid"]
    again, more = sse_post(
        server,
        {"content": "again", "conversation_id": events[0]["conversation_id"]},
        cookies={"sessionid": key},
    )

    assert events[-1]["type"] == "done" and more[-1]["type"] == "done"
    assert list(Session.objects.values_list("session_key", flat=True)) == [key]
    assert Conversation.objects.get().session_key == session_digest(key)  # never the cookie


async def test_a_forged_session_key_is_not_adopted(serve):
    # A key this site could not have minted (wrong shape) gets a fresh session instead.
    server = serve("sessions-forged")
    socket = await ws_open(server, cookie="attacker-chosen-key")

    events = await ws_ask(socket, "hello")
    await socket.close()

    keys = await session_keys()
    assert events[-1]["type"] == "done"
    assert len(keys) == 1 and keys[0] != "attacker-chosen-key"


async def test_refused_messages_and_votes_from_new_visitors_write_no_session_rows(serve):
    # A cookie-less client wrote a session row for every request, even one the limit refused
    # and a vote that could only fail: an unlimited stream of rows from one address.
    same_minute(40)
    server = serve("sessions-litter", AGENT_MESSAGES_PER_MINUTE_PER_IP="4")
    vote = {"type": "feedback", "conversation_id": str(uuid.uuid4()), "turn": 1, "vote": "up"}

    answers = [(await asyncio.to_thread(sse_post, server, {"content": "hi"}))[1] for _ in range(10)]
    forged = [
        await asyncio.to_thread(
            sse_post, server, {"content": "hi"}, cookies={"sessionid": secrets.token_hex(16)}
        )
        for _ in range(4)
    ]
    for _ in range(8):
        socket = await ws_open(server)
        await socket.send(json.dumps(vote))
        assert (await ws_first(socket))["code"] == "bad_request"
        await socket.close()
    voted = [(await asyncio.to_thread(sse_post, server, vote))[1] for _ in range(8)]

    codes = [events[0].get("code", events[0]["type"]) for events in answers]
    assert codes == ["start"] * 4 + ["rate_limited"] * 6
    assert all(events[0]["code"] == "rate_limited" for _, events in forged)
    assert all(events[0]["code"] == "bad_request" for events in voted)
    assert await rows("sessions.Session") == 4


def test_malformed_messages_from_new_visitors_write_no_session_rows(serve):
    # The WebSocket checked a message before writing the session; POST /api/chat wrote the
    # row first, so each empty or malformed message from a client without a cookie left one.
    server = serve("sessions-bad-requests")
    bodies = ["[]", '"x"', {"content": "   "}, {"content": "x" * 5000}]

    answers = [sse_post(server, body) for body in bodies for _ in range(3)]

    # A body that is no JSON object is refused before the stream (a 400 saying so, red team
    # 39); an empty or over-long message in the stream's first event. Neither writes a row.
    codes = [
        events[0]["code"] if events else response.json()["code"] for response, events in answers
    ]
    assert codes == ["bad_request"] * len(answers)
    assert [response.status_code for response, _ in answers[:6]] == [400] * 6
    assert all("sessionid" not in response.cookies for response, _ in answers)
    assert rows_now("sessions.Session") == 0


async def test_sessions_past_their_expiry_are_deleted_every_hour(serve):
    # Nothing deleted expired sessions (Django leaves that to `clearsessions`): every new
    # visitor's first message wrote a row for good, and one address could write one per
    # message it may send, 30 a minute, 43,200 a day, each kept for ever.
    from datetime import timedelta

    from django.utils import timezone
    from procrastinate.contrib.django import app

    from docent.tasks import sessions_clear_expired

    same_minute(40)
    server = serve("sessions-expired", AGENT_MESSAGES_PER_MINUTE_PER_IP="6")
    answers = [(await asyncio.to_thread(sse_post, server, {"content": "hi"}))[1] for _ in range(8)]
    written = await session_keys()
    alive = written[0]
    await database_sync_to_async(
        Session.objects.exclude(session_key=alive).update  # two weeks later, but one
    )(expire_date=timezone.now() - timedelta(seconds=1))

    await sessions_clear_expired.func(timestamp=0)

    assert [events[-1]["type"] for events in answers] == ["done"] * 6 + ["error"] * 2
    assert len(written) == 6
    assert await session_keys() == [alive]
    periodic = {task.periodic_id: task for task in app.periodic_registry.periodic_tasks.values()}
    assert periodic["sessions"].task.name == "docent.sessions_clear_expired"
