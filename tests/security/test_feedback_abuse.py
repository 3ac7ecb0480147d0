"""Votes are writes: one socket sent 2,000 in 14 s, each an UPDATE, with no limit at all."""

import json
import uuid

import httpx
import pytest

from tests.security.clients import same_minute, sse_post, ws_ask, ws_first, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_visitor_cannot_flood_votes_on_one_socket(serve):
    same_minute(40)
    server = serve("votes", AGENT_FEEDBACK_PER_MINUTE="5")
    socket = await ws_open(server)
    conversation = (await ws_ask(socket, "what is docent?"))[0]["conversation_id"]
    vote = {"type": "feedback", "conversation_id": conversation, "turn": 1}

    answers = []
    for index in range(8):
        await socket.send(json.dumps({**vote, "vote": ("up", "down")[index % 2]}))
        answers.append(await ws_first(socket))
    await socket.close()

    kinds = [answer.get("code", answer["type"]) for answer in answers]
    assert kinds == ["feedback_saved"] * 5 + ["rate_limited"] * 3
    assert answers[-1]["retry_after"] >= 1


def test_a_vote_without_a_session_is_refused_without_a_session_or_a_write(serve):
    server = serve("votes-anonymous")
    vote = {"type": "feedback", "conversation_id": "0" * 32, "turn": 1, "vote": "up"}

    response, events = sse_post(server, vote)

    assert events[0]["code"] == "bad_request"
    assert "sessionid" not in response.headers.get("set-cookie", "")


async def test_many_sessions_on_one_address_share_its_vote_limit(serve):
    # Per session only, each new session (a socket without a cookie and one question) brought
    # a fresh allowance: about 30 sessions x 30 votes a minute from one address.
    same_minute(40)
    server = serve(
        "votes-per-address", AGENT_FEEDBACK_PER_MINUTE="5", AGENT_FEEDBACK_PER_MINUTE_PER_IP="6"
    )

    kinds = []
    for _session in range(3):
        socket = await ws_open(server)  # no cookie: a new session each time
        conversation = (await ws_ask(socket, "what is docent?"))[0]["conversation_id"]
        for vote in ("up", "down", "up"):
            frame = {"type": "feedback", "conversation_id": conversation, "turn": 1, "vote": vote}
            await socket.send(json.dumps(frame))
            answer = await ws_first(socket)
            kinds.append(answer.get("code", answer["type"]))
        await socket.close()

    assert kinds == ["feedback_saved"] * 6 + ["rate_limited"] * 3


def test_a_refused_vote_over_the_rest_route_is_a_429_with_retry_after(serve):
    # It was a 400 without Retry-After: "your vote is malformed", so a client neither waited
    # nor tried again, while the same refusal over SSE and the socket says rate_limited.
    server = serve("votes-rest", AGENT_FEEDBACK_PER_MINUTE="2")
    path = f"/api/conversations/{uuid.uuid4()}/turns/1/feedback"
    cookies = {"sessionid": "b" * 32}

    with httpx.Client(base_url=server.url, timeout=30, cookies=cookies) as client:
        answers = [
            client.post(path, json={"vote": "up"}, headers={"Origin": server.url}) for _ in range(3)
        ]

    assert [answer.status_code for answer in answers] == [404, 404, 429]  # before: 404, 404, 400
    assert answers[-1].json()["detail"].startswith("Too many votes")
    assert 1 <= int(answers[-1].headers["Retry-After"]) <= 60
