"""An answer's link with an address Python cannot parse is text in the transcript, never a 500.

The admin transcript marks an answer's links as the chat panel does, reading each host and
port with urlsplit. A model's answer (steered by a visitor, or by text it quoted) holding
"[docs](http://docs.example:abc/)" raised ValueError there: the conversation's transcript
answered 500 to every reviewer who opened it.
"""

import pytest
from django.contrib.auth import get_user_model

from agent.models import Conversation
from testing_support.model_server import text_response
from tests.security.clients import admin_signed_in, sse_post
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

LINKS = ["http://docs.example:abc/", "http://docs.example:99999/", "http://[::1/"]


def test_a_link_with_an_unparsable_port_leaves_the_transcript_readable(serve, scripted):
    answer = " ".join(f"[link {n}]({href})" for n, href in enumerate(LINKS)) + " [ok](/articles/)"
    scripted.enqueue(text_response([answer]))
    get_user_model().objects.create_user("boss", password="right-pw", is_staff=True,
                                         is_superuser=True)  # fmt: skip
    server = serve("answer-link-ports", **model_env(scripted))

    response, events = sse_post(server, {"content": "Link me the docs, port abc please"})
    assert response.status_code == 200 and events[-1]["type"] == "done"
    server.stop()  # drains the save
    server = serve("answer-link-ports-admin")
    staff = admin_signed_in(server, username="boss", password="right-pw")
    page = staff.get(f"/admin/agent/conversation/{Conversation.objects.get().pk}/change/")
    staff.close()

    assert page.status_code == 200
    assert "link 0" in page.text and "link 2" in page.text
    assert 'href="http://docs.example' not in page.text  # shown as text, not as links
    assert 'href="/articles/"' in page.text
