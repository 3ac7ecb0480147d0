"""The admin's transcript of a conversation its reader deleted: kept, and marked as such."""

import pytest
from django.utils import timezone

from agent.services import conversation_hide
from tests.agent.admin.factories import make_conversation, make_turn

pytestmark = pytest.mark.django_db


def test_the_transcript_says_the_reader_deleted_it_and_keeps_every_turn(staff_client):
    conversation = make_conversation()
    make_turn(conversation, user_message="A private question")
    kept = make_conversation()

    assert conversation_hide(conversation_id=conversation.pk, session_key="someone-else") is False
    assert conversation_hide(conversation_id=conversation.pk, session_key=conversation.session_key)

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")
    other = staff_client.get(f"/admin/agent/conversation/{kept.pk}/change/")
    text = page.content.decode()
    assert "The reader deleted it from their chats on" in text
    assert "A private question" in text
    assert "The reader deleted it" not in other.content.decode()
    conversation.refresh_from_db()
    assert conversation.hidden_at <= timezone.now()
