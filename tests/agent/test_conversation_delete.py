"""A reader deletes their own conversation: gone for their session, kept for the admins."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient

from agent.models import Conversation, Turn
from agent.runner import runner
from testing_support.model_server import text_response
from tests.agent.test_api_chat import SAME_ORIGIN, post_chat

pytestmark = pytest.mark.django_db(transaction=True)


async def delete(client: AsyncClient, conversation_id: str, **headers):
    return await client.delete(
        f"/api/conversations/{conversation_id}",
        data="{}",  # an API write is JSON (config.origins): the panel sends this type
        content_type="application/json",
        headers={**SAME_ORIGIN, **headers},
    )


async def test_a_reader_deletes_their_conversation_and_cannot_bring_it_back(scripted):
    # The panel had no way to delete a conversation: on a shared computer, "New chat" left it
    # one click ("Bring back the last conversation") from the next person at the keyboard.
    scripted.enqueue(text_response(["One."]))
    owner = AsyncClient()
    first = await post_chat(owner, content="My private question")
    conversation_id = first[0]["conversation_id"]
    assert await runner.saver.drain(timeout=10)

    stranger = await delete(AsyncClient(), conversation_id)
    deleted = await delete(owner, conversation_id)
    read = await owner.get(f"/api/conversations/{conversation_id}")
    again = await delete(owner, conversation_id)
    go_on = await post_chat(owner, content="And then?", conversation_id=conversation_id)
    vote = await owner.post(
        f"/api/conversations/{conversation_id}/turns/1/feedback",
        data=json.dumps({"vote": "up"}),
        content_type="application/json",
        headers=SAME_ORIGIN,
    )

    assert stranger.status_code == 404  # another session's is unknown, and stays
    assert deleted.status_code == 204 and deleted.content == b""
    assert read.status_code == 404 and again.status_code == 404
    assert go_on[-1]["code"] == "bad_request"
    assert vote.status_code == 404
    # The admins' record of every conversation keeps it, marked as the reader's delete.
    kept = await database_sync_to_async(Conversation.objects.get)(pk=conversation_id)
    assert kept.hidden_at is not None
    turns = await database_sync_to_async(list)(Turn.objects.filter(conversation_id=kept.pk))
    assert [(t.user_message, t.answer, t.vote) for t in turns] == [
        ("My private question", "One.", "")
    ]


async def test_another_site_cannot_delete_a_readers_conversation(scripted):
    scripted.enqueue(text_response(["One."]))
    owner = AsyncClient()
    conversation_id = (await post_chat(owner, content="Hello there, question"))[0][
        "conversation_id"
    ]
    assert await runner.saver.drain(timeout=10)

    refused = await delete(owner, conversation_id, Origin="https://evil.example")

    assert refused.status_code == 403
    assert (await owner.get(f"/api/conversations/{conversation_id}")).status_code == 200
