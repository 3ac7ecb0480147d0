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


def test_the_list_marks_and_filters_the_conversations_their_readers_deleted(staff_client):
    # The mark lived only on the transcript: a reviewer could not list what readers deleted,
    # nor leave it out, without opening every conversation.
    gone = make_conversation(page="gone")
    make_turn(gone, user_message="Something I regret asking")
    make_conversation(page="kept")
    assert conversation_hide(conversation_id=gone.pk, session_key=gone.session_key)

    def listed(query: str) -> set[str]:
        response = staff_client.get(f"/admin/agent/conversation/?{query}")
        return {row.page for row in response.context["cl"].result_list}

    assert listed("reader_deleted=yes") == {"gone"}
    assert listed("reader_deleted=no") == {"kept"}
    assert listed("") == {"gone", "kept"}
    html = staff_client.get("/admin/agent/conversation/").content.decode()
    assert "By deleted by the reader" in html
    row = html.split("Something I regret asking", 1)[1].split("</tr>", 1)[0]
    assert 'class="dc-flag dc-flag--muted"' in row and ">deleted</span>" in row
    assert html.count("dc-flag--muted") == 1
