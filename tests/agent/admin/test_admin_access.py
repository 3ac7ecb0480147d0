"""Who may see the audit pages, and that nobody may write through them."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from agent.admin import ConversationAdmin
from agent.models import Conversation, ToolCall, Turn
from tests.agent.admin.factories import make_busy_conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation():
    return make_busy_conversation(turns=2)


def pages(conversation: Conversation) -> list[str]:
    turn = conversation.turns.first()
    call = ToolCall.objects.filter(turn=turn).first()
    return [
        "/admin/agent/conversation/",
        f"/admin/agent/conversation/{conversation.pk}/change/",
        f"/admin/agent/conversation/{conversation.pk}/export/",
        "/admin/agent/conversation/dashboard/",
        "/admin/agent/conversation/unanswered/",
        "/admin/agent/turn/",
        f"/admin/agent/turn/{turn.pk}/change/",
        "/admin/agent/toolcall/",
        f"/admin/agent/toolcall/{call.pk}/change/",
    ]


def test_anonymous_visitors_are_sent_to_the_login(client, conversation):
    for url in pages(conversation):
        response = client.get(url)

        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url


def test_logged_in_non_staff_users_are_sent_to_the_login(client, conversation):
    client.force_login(get_user_model().objects.create_user("reader", password="pw"))

    for url in pages(conversation):
        response = client.get(url)

        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url


def test_staff_without_permission_on_conversations_are_refused(client, conversation):
    client.force_login(get_user_model().objects.create_user("intern", password="pw", is_staff=True))

    for url in pages(conversation):
        assert client.get(url).status_code == 403, url


def test_staff_with_view_permission_see_every_page(client, conversation):
    user = get_user_model().objects.create_user("editor2", password="pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="agent", codename__startswith="view_")
    )
    client.force_login(user)

    for url in pages(conversation):
        assert client.get(url).status_code == 200, url


def test_superusers_see_every_page(staff_client, conversation):
    for url in pages(conversation):
        assert staff_client.get(url).status_code == 200, url


def test_audit_rows_cannot_be_added_changed_or_deleted_even_by_a_superuser(
    staff_client, conversation
):
    turn = conversation.turns.first()
    call = ToolCall.objects.filter(turn=turn).first()
    before = (Conversation.objects.count(), Turn.objects.count(), ToolCall.objects.count())

    writes = [
        (f"/admin/agent/conversation/{conversation.pk}/change/", {"page": "hacked"}),
        (f"/admin/agent/conversation/{conversation.pk}/delete/", {"post": "yes"}),
        (f"/admin/agent/conversation/{conversation.pk}/export/", {}),
        ("/admin/agent/conversation/add/", {"session_key": "x"}),
        (f"/admin/agent/turn/{turn.pk}/change/", {"answer": "rewritten", "status": "done"}),
        (f"/admin/agent/turn/{turn.pk}/delete/", {"post": "yes"}),
        ("/admin/agent/turn/add/", {}),
        (f"/admin/agent/toolcall/{call.pk}/change/", {"ok": "on", "error": ""}),
        (f"/admin/agent/toolcall/{call.pk}/delete/", {"post": "yes"}),
        ("/admin/agent/toolcall/add/", {}),
        ("/admin/agent/conversation/dashboard/", {}),
    ]
    for url, data in writes:
        assert staff_client.post(url, data).status_code == 403, url

    bulk = {"action": "delete_selected", "_selected_action": [str(conversation.pk)], "post": "yes"}
    staff_client.post("/admin/agent/conversation/", bulk)

    assert (Conversation.objects.count(), Turn.objects.count(), ToolCall.objects.count()) == before
    turn.refresh_from_db()
    conversation.refresh_from_db()
    assert turn.answer != "rewritten"
    assert conversation.page == "pgvector-notes"


def test_the_admin_grants_no_write_permission_to_anyone(rf):
    user = get_user_model()(is_staff=True, is_superuser=True, is_active=True)
    request = rf.get("/")
    request.user = user
    from django.contrib import admin

    for model in (Conversation, Turn, ToolCall):
        model_admin = admin.site.get_model_admin(model)
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request)
        assert not model_admin.has_delete_permission(request)
        assert model_admin.has_view_permission(request)
    assert isinstance(admin.site.get_model_admin(Conversation), ConversationAdmin)


def test_the_reports_are_linked_from_the_admin_index_and_the_changelist(staff_client, conversation):
    index = staff_client.get("/admin/").content.decode()
    changelist = staff_client.get("/admin/agent/conversation/").content.decode()

    for html in (index, changelist):
        assert 'href="/admin/agent/conversation/dashboard/"' in html
        assert 'href="/admin/agent/conversation/unanswered/"' in html


def test_staff_without_permission_see_no_report_links(client, conversation):
    client.force_login(get_user_model().objects.create_user("intern", password="pw", is_staff=True))

    assert "/admin/agent/conversation/dashboard/" not in client.get("/admin/").content.decode()


def test_the_admin_says_docent_not_django(staff_client):
    login = Client().get("/admin/login/").content.decode()
    index = staff_client.get("/admin/").content.decode()

    for html in (login, index):
        assert "Docent admin" in html and "Django administration" not in html
    assert "Articles and conversations" in index
