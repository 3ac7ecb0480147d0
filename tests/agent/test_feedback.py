"""Visitor feedback on finished answers: over the WebSocket, SSE and REST, for the owner only."""

import asyncio
import json
import uuid

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import AsyncClient

from agent.feedback import FeedbackQueue
from agent.models import Conversation, Turn
from agent.services import FEEDBACK_NOT_FOUND
from testing_support.live_server import database_url
from testing_support.model_server import text_response
from tests.agent.chat_helpers import ask, connect, saved_turns
from tests.agent.test_api_chat import SAME_ORIGIN, post_chat

pytestmark = pytest.mark.django_db(transaction=True)


async def vote_of(conversation_id: str, index: int = 1) -> tuple[str, str]:
    turn = await database_sync_to_async(
        lambda: Turn.objects.get(conversation_id=conversation_id, index=index)
    )()
    return turn.vote, turn.feedback_comment


async def send_feedback(socket, **frame) -> dict:
    await socket.send_json_to({"type": "feedback", **frame})
    return await socket.receive_json_from(timeout=10)


async def test_websocket_vote_can_be_changed_and_cleared(scripted):
    scripted.enqueue(text_response(["An answer."]))
    socket = await connect()
    conversation_id = (await ask(socket, "A question"))[0]["conversation_id"]

    up = await send_feedback(socket, conversation_id=conversation_id, turn=1, vote="up")
    assert up == {"type": "feedback_saved", "turn": 1}
    assert await vote_of(conversation_id) == ("up", "")

    down = await send_feedback(
        socket, conversation_id=conversation_id, turn=1, vote="down", comment=" Too vague. "
    )
    assert down == {"type": "feedback_saved", "turn": 1}
    assert await vote_of(conversation_id) == ("down", "Too vague.")  # one vote, replaced

    cleared = await send_feedback(socket, conversation_id=conversation_id, turn=1, vote="none")
    assert cleared["type"] == "feedback_saved"
    assert await vote_of(conversation_id) == ("", "")
    await socket.disconnect()


async def test_websocket_votes_sent_at_once_are_saved_and_answered_in_order(scripted):
    # Each vote is saved in a task of its own (agent.feedback.FeedbackQueue): one after
    # another, so the last one sent is the one that stands.
    scripted.enqueue(text_response(["An answer."]))
    socket = await connect()
    conversation_id = (await ask(socket, "A question"))[0]["conversation_id"]
    votes = ["up", "down", "none", "down", "up", "down"]
    for index, vote in enumerate(votes):
        frame = {"conversation_id": conversation_id, "turn": 1, "vote": vote}
        await socket.send_json_to({"type": "feedback", **frame, "comment": str(index)})

    answers = [await socket.receive_json_from(timeout=10) for _ in votes]

    assert answers == [{"type": "feedback_saved", "turn": 1}] * len(votes)
    assert await vote_of(conversation_id) == ("down", "5")
    await socket.disconnect()


async def test_votes_waiting_past_the_limit_are_refused_busy(scripted):
    # A socket's votes wait in tasks, no longer as frames under daphne's bound: the bound is
    # theirs (WEBSOCKET_QUEUED_FRAMES). Made to wait for real: the turn's row is locked.
    scripted.enqueue(text_response(["An answer."]))
    socket = await connect()
    conversation_id = (await ask(socket, "A question"))[0]["conversation_id"]
    [turn] = await saved_turns()
    session_key = await database_sync_to_async(
        lambda: Conversation.objects.get(pk=conversation_id).session_key
    )()
    answers: list[dict] = []
    votes = FeedbackQueue(reply=_append_to(answers), limit=2)
    frame = {"conversation_id": conversation_id, "turn": 1, "vote": "up"}

    with psycopg.connect(database_url(connection.settings_dict["NAME"])) as holder:
        holder.execute("SELECT id FROM agent_turn WHERE id = %s FOR UPDATE", [turn.pk])
        for _ in range(3):
            await votes.put(frame=frame, session_key=session_key, client_ip="127.0.0.1")
        await asyncio.sleep(0.5)
        assert [(a["code"], a["feedback"]) for a in answers] == [("busy", True)]
        holder.rollback()
    for _ in range(100):
        if len(answers) == 3:
            break
        await asyncio.sleep(0.05)

    assert answers[1:] == [{"type": "feedback_saved", "turn": 1}] * 2
    await socket.disconnect()


def _append_to(answers: list[dict]):
    async def reply(event: dict) -> None:
        answers.append(event)

    return reply


async def test_websocket_refuses_another_sessions_turn_like_an_unknown_one(scripted):
    scripted.enqueue(text_response(["An answer."]))
    owner = await connect()
    conversation_id = (await ask(owner, "A question"))[0]["conversation_id"]
    await saved_turns()
    stranger = await connect()

    foreign = await send_feedback(stranger, conversation_id=conversation_id, turn=1, vote="down")
    unknown = await send_feedback(owner, conversation_id=str(uuid.uuid4()), turn=1, vote="up")
    no_such_turn = await send_feedback(owner, conversation_id=conversation_id, turn=2, vote="up")

    for event in (foreign, unknown, no_such_turn):
        assert event["type"] == "error" and event["code"] == "bad_request"
        assert event["message"] == FEEDBACK_NOT_FOUND
        assert event["feedback"] is True  # not the end of an answer streaming meanwhile
    assert (foreign["turn"], no_such_turn["turn"]) == (1, 2)
    assert await vote_of(conversation_id) == ("", "")
    await owner.disconnect()
    await stranger.disconnect()


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"turn": 1, "vote": "maybe"}, 'vote must be "up", "down" or "none".'),
        ({"turn": 0, "vote": "up"}, "turn must be the answer’s turn number (1 or more)."),
        ({"turn": "1", "vote": "up"}, "turn must be the answer’s turn number (1 or more)."),
        ({"turn": 1, "vote": "up", "comment": 5}, "comment must be text."),
        (
            {"turn": 1, "vote": "down", "comment": "x" * 1001},
            "The comment is 1,001 characters long; the limit is 1,000.",
        ),
        (
            {"conversation_id": "nope", "turn": 1, "vote": "up"},
            "conversation_id is not a valid id.",
        ),
    ],
)
async def test_websocket_bad_feedback_frames_get_bad_request(scripted, frame, message):
    socket = await connect()

    event = await send_feedback(socket, **{"conversation_id": str(uuid.uuid4()), **frame})

    assert (event["type"], event["code"], event["message"]) == ("error", "bad_request", message)
    assert event["feedback"] is True
    await socket.send_json_to({"type": "stop"})  # the socket is still usable
    await socket.disconnect()


async def test_sse_feedback_and_the_restored_conversation_carries_the_vote(scripted):
    scripted.enqueue(text_response(["One."]))
    owner = AsyncClient()
    conversation_id = (await post_chat(owner, content="First"))[0]["conversation_id"]

    saved = await post_chat(
        owner,
        type="feedback",
        conversation_id=conversation_id,
        turn=1,
        vote="down",
        comment="Wrong article.",
    )
    foreign = await post_chat(
        AsyncClient(), type="feedback", conversation_id=conversation_id, turn=1, vote="up"
    )
    restored = (await owner.get(f"/api/conversations/{conversation_id}")).json()

    assert saved == [{"type": "feedback_saved", "turn": 1}]
    assert foreign[0]["code"] == "bad_request" and foreign[0]["message"] == FEEDBACK_NOT_FOUND
    [turn] = restored["turns"]
    assert (turn["vote"], turn["comment"]) == ("down", "Wrong article.")


async def test_rest_feedback_for_the_owner_only(scripted):
    scripted.enqueue(text_response(["One."]))
    owner = AsyncClient()
    conversation_id = (await post_chat(owner, content="First"))[0]["conversation_id"]
    url = f"/api/conversations/{conversation_id}/turns/1/feedback"

    async def post(client, path=url, **body):
        return await client.post(
            path, data=json.dumps(body), content_type="application/json", headers=SAME_ORIGIN
        )

    first = await post(owner, vote="up")
    changed = await post(owner, vote="down", comment="Missed the table.")
    stranger = await post(AsyncClient(), vote="up")
    missing = await post(owner, path=url.replace("/turns/1/", "/turns/7/"), vote="up")
    bad = await post(owner, vote="sideways")

    assert (first.status_code, first.json()) == (200, {"type": "feedback_saved", "turn": 1})
    assert changed.status_code == 200
    assert (stranger.status_code, missing.status_code, bad.status_code) == (404, 404, 400)
    assert await vote_of(conversation_id) == ("down", "Missed the table.")
    schema = (await AsyncClient().get("/api/openapi.json")).json()
    assert "/api/conversations/{conversation_id}/turns/{turn}/feedback" in schema["paths"]


def test_a_turn_still_running_takes_no_vote():
    from agent.exceptions import BadRequest
    from agent.services import turn_feedback_set
    from tests.agent.admin.factories import make_conversation, make_turn

    conversation = make_conversation()
    make_turn(conversation, index=1, status=Turn.Status.RUNNING, answer="")

    with pytest.raises(BadRequest, match=FEEDBACK_NOT_FOUND):
        turn_feedback_set(conversation_id=conversation.pk, session_key=conversation.session_key,
                          index=1, vote="up", comment="")  # fmt: skip
