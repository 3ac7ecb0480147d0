"""A visitor's hidden characters must not reach the title of an article the editor writes.

The admin dashboard and the unanswered-questions page show each question the blog declined
with "Write an article about this": the article form with the question as its title. Those
pages label a bidi control as what it is, but the link passed the question's characters as
typed, so the form's title held a visitor's U+202E (the rest of the title read backwards),
zero-width spaces, isolates and invisible tag characters, none of which the editor could see
was there, and saving the form put them in the title of a public page. The visitor asks over
the chat socket of a live daphne; a staff user follows the link through the real admin.
"""

import html
import json
import re
import unicodedata

import pytest
from django.contrib.auth import get_user_model
from websockets.sync.client import connect

from tests.security.clients import admin_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

# An override, a zero-width space, an isolate pair, and "HI" in invisible tag characters.
HIDDEN = "\u202e\u200b\u2066\u2069\U000e0048\U000e0049"
QUESTION = f"Tell me about {HIDDEN[0]}quixo{HIDDEN[1]}tron {HIDDEN[2]}zorblax{HIDDEN[3:]} please"
SHOWN = "Tell me about quixotron zorblax please"
PAGES = ["/admin/agent/conversation/dashboard/", "/admin/agent/conversation/unanswered/"]
_WRITE_LINK = re.compile(r'<a[^>]*class="[^"]*dc-question__write"[^>]*>')
_TITLE_INPUT = re.compile(r'<input[^>]*name="title"[^>]*>')


def visitor_asks(server, question: str = QUESTION) -> None:
    """A question the empty blog declines, asked over the chat socket."""
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as socket:
        socket.send(json.dumps({"type": "message", "content": question}))
        while json.loads(socket.recv(timeout=60))["type"] not in {"done", "error"}:
            pass


def written_titles(staff, page: str) -> list[str]:
    """The title each "Write an article about this" link of `page` puts in the article form."""
    links = _WRITE_LINK.findall(staff.get(page).text)
    hrefs = [html.unescape(re.search(r'href="([^"]*)"', link).group(1)) for link in links]
    inputs = [_TITLE_INPUT.search(staff.get(href).text).group() for href in hrefs]
    return [html.unescape(re.search(r'value="([^"]*)"', field).group(1)) for field in inputs]


def test_write_an_article_link_leaves_a_visitors_hidden_characters_out(serve):
    server = serve("admin-write-link")
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    visitor_asks(server)

    staff = admin_signed_in(server, username="editor", password="a-long-password")
    titles = {page: written_titles(staff, page) for page in PAGES}
    staff.close()

    assert titles == {page: [SHOWN] for page in PAGES}
    hidden = [c for title in titles[PAGES[0]] for c in title if unicodedata.category(c) == "Cf"]
    assert hidden == []
