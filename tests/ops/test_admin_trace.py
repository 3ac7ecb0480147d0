"""The transcript shows each turn's trace id, as a link when a trace viewer is configured."""

import pytest

from tests.agent.admin.factories import make_conversation, make_turn

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _page(staff_client, conversation) -> str:
    return staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()


def test_the_trace_id_is_shown(staff_client):
    conversation = make_conversation()
    make_turn(conversation, trace_id=TRACE)

    page = _page(staff_client, conversation)

    assert f"<code>{TRACE}</code>" in page
    assert "/trace/" not in page


def test_the_trace_id_links_to_the_viewer(staff_client, settings):
    settings.OTEL_TRACE_URL_TEMPLATE = "https://jaeger.example/trace/{trace_id}"
    conversation = make_conversation()
    make_turn(conversation, trace_id=TRACE)
    make_turn(conversation)  # traced nowhere: no row, no link

    page = _page(staff_client, conversation)

    assert page.count(f'href="https://jaeger.example/trace/{TRACE}"') == 1
    assert page.count("https://jaeger.example/trace/") == 1


def test_the_export_carries_the_trace_id(staff_client):
    conversation = make_conversation()
    make_turn(conversation, trace_id=TRACE)
    response = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/export/")
    assert response.json()["turns"][0]["trace_id"] == TRACE
