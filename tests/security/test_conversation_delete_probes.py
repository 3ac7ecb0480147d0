"""Red team 37: the reader's delete (`DELETE /api/conversations/{id}`), made for real.

Another session's id, an unknown one, no cookie, another site, method tricks (HEAD, OPTIONS,
a POST naming X-HTTP-Method-Override), a replay, the transcript allowance, and a delete while
the conversation's turn still streams: none brings a conversation back or hides another's.
Each held on the first run (no hole found); kept so that they go on holding.
"""

import asyncio
import json
import uuid

import httpx
import pytest
from channels.db import database_sync_to_async

from agent.models import Conversation, Turn
from testing_support.model_server import text_response
from tests.security.clients import same_minute, ws_events, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


def _reader(server) -> tuple[httpx.Client, str]:
    """A reader with a session and one conversation of a finished turn: (client, its id)."""
    client = httpx.Client(base_url=server.url, timeout=30, headers={"Origin": server.url})
    body = {"type": "message", "content": "What is reciprocal rank fusion?"}
    with client.stream("POST", "/api/chat", json=body) as response:
        text = response.read().decode()
    start = next(line for line in text.splitlines() if '"start"' in line)
    return client, json.loads(start.removeprefix("data: "))["conversation_id"]


def _delete(client, path: str, **headers) -> int:
    """DELETE as the panel sends it: an API write is JSON (config.origins)."""
    return client.request("DELETE", path, json={}, headers=headers).status_code


def test_only_the_owner_deletes_and_only_by_delete(serve):
    server = serve("delete-probes", AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="40")
    same_minute(40)
    owner, conversation_id = _reader(server)
    other, _ = _reader(server)
    path = f"/api/conversations/{conversation_id}"
    stranger = httpx.Client(base_url=server.url, timeout=30, headers={"Origin": server.url})

    assert _delete(other, path) == 404  # another session's id
    assert _delete(stranger, path) == 404  # no cookie at all
    assert _delete(owner, f"/api/conversations/{uuid.uuid4()}") == 404
    assert _delete(owner, "/api/conversations/not-an-id") in {404, 422}
    assert _delete(owner, path, Origin="https://evil.example") == 403
    assert _delete(owner, path, Origin="null") == 403
    # Not JSON: what a form or a no-preflight fetch from another page could send.
    assert owner.request("DELETE", path).status_code in {403, 415}
    # Not JSON: what a form or a no-preflight fetch of another page could send.
    assert owner.request("DELETE", path).status_code in {403, 415}
    override = {"X-HTTP-Method-Override": "DELETE", "X-HTTP-Method": "DELETE"}
    assert owner.post(path, json={}, headers=override).status_code == 405
    assert owner.post(f"{path}?_method=DELETE", json={}).status_code == 405
    assert owner.head(path).status_code == 200  # a read, as GET
    assert owner.options(path).status_code in {200, 204, 405}  # an answer, never a delete
    assert Conversation.objects.get(pk=conversation_id).hidden_at is None

    assert _delete(owner, path) == 204
    assert _delete(owner, path) == 404  # a replay finds nothing
    assert owner.get(path).status_code == 404
    vote = owner.post(f"{path}/turns/1/feedback", json={"vote": "up"})
    assert vote.status_code == 404
    assert Turn.objects.get(conversation_id=conversation_id).vote == ""


def test_deletes_count_on_the_transcript_allowance(serve):
    server = serve("delete-allowance", AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="3")
    same_minute(30)
    with httpx.Client(base_url=server.url, timeout=30, headers={"Origin": server.url}) as client:
        statuses = [_delete(client, f"/api/conversations/{uuid.uuid4()}") for _ in range(5)]
        refused = client.request("DELETE", f"/api/conversations/{uuid.uuid4()}", json={})
    assert statuses == [404] * 3 + [429] * 2
    assert int(refused.headers["Retry-After"]) >= 1


async def test_a_delete_while_the_turn_streams_stays_deleted(serve, scripted):
    scripted.enqueue(text_response(["Fusion ", "ranks ", "by ", "reciprocal rank."], delay=0.5))
    server = serve("delete-streaming", **model_env(scripted))
    key = uuid.uuid4().hex  # the reader's session key, as the site mints them
    socket = await ws_open(server, cookie=key)
    await socket.send('{"type": "message", "content": "What is reciprocal rank fusion?"}')
    start = await ws_events_first(socket)
    conversation_id = start["conversation_id"]
    async with httpx.AsyncClient(
        base_url=server.url,
        timeout=30,
        headers={"Origin": server.url, "Cookie": f"sessionid={key}"},
    ) as client:
        deleted = await client.request("DELETE", f"/api/conversations/{conversation_id}", json={})
        events = await ws_events(socket)
        assert deleted.status_code == 204
        assert events[-1]["type"] == "done"  # the turn ends as it would have
        vote = await client.post(
            f"/api/conversations/{conversation_id}/turns/1/feedback", json={"vote": "up"}
        )
        assert vote.status_code == 404
        assert (await client.get(f"/api/conversations/{conversation_id}")).status_code == 404
    follow_up = {"type": "message", "content": "And then?", "conversation_id": conversation_id}
    await socket.send(json.dumps(follow_up))
    follow = await ws_events(socket)
    assert follow[-1]["type"] == "error" and follow[-1]["code"] == "bad_request"
    await socket.close()
    server.stop()  # its saves have landed
    kept = await database_sync_to_async(Conversation.objects.get)(pk=conversation_id)
    turns = await database_sync_to_async(list)(Turn.objects.filter(conversation_id=kept.pk))
    assert kept.hidden_at is not None  # the save after the delete did not bring it back
    assert [t.answer for t in turns] == ["Fusion ranks by reciprocal rank."]


async def ws_events_first(socket) -> dict:
    while True:
        event = json.loads(await asyncio.wait_for(socket.recv(), 20))
        if event["type"] == "start":
            return event
