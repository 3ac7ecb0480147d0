"""A visitor's bidi controls must not rearrange what the reviewer reads in the admin.

A question or vote comment with U+202E (RIGHT-TO-LEFT OVERRIDE) was shown as typed: escaped,
but obeyed by the browser, so the words after it read backwards on every admin page that
shows visitor text. The visitor sends them over the chat socket of a live daphne; a staff
user reads them in Chromium, which lays the text out for real.
"""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from websockets.sync.client import connect

from agent.models import ToolCall, Turn
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
RLO = "\u202e"
# "ZQ" after an override reads "QZ": the probe checks Z is still left of Q in every place.
QUESTION = f"Tell me about {RLO}ZQ please"
COMMENT = f"Wrong answer {RLO}ZQ indeed"

# For each "ZQ" in a visible text node under #content: is Z laid out left of Q?
READS_FORWARD = """() => {
  const left = (node, i) => {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    return range.getBoundingClientRect().left;
  };
  const found = [];
  const content = document.querySelector('#content');
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let at = node.data.indexOf('ZQ'); at >= 0; at = node.data.indexOf('ZQ', at + 1)) {
      found.push(left(node, at) < left(node, at + 1));
    }
  }
  return found;
}"""


def read_in_chromium(server, paths: list[str]) -> dict[str, list[bool]]:
    """Sign in as the editor and run READS_FORWARD on each page. Playwright's sync API keeps
    an event loop in this thread, so the ORM is not touched while it runs."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1440, "height": 900})
        sign_in(page, server.url)
        seen = {}
        for path in paths:
            page.goto(server.url + path)
            seen[path] = page.evaluate(READS_FORWARD)
        chromium.close()
    return seen


def visitor_asks_and_votes(server) -> None:
    """A question the empty blog declines, then a down vote with a comment."""
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as socket:
        socket.send(json.dumps({"type": "message", "content": QUESTION}))
        while (event := json.loads(socket.recv(timeout=60)))["type"] not in {"done", "error"}:
            pass
        vote = {"type": "feedback", "turn": 1, "vote": "down", "comment": COMMENT}
        socket.send(json.dumps({**vote, "conversation_id": event["conversation_id"]}))
        assert json.loads(socket.recv(timeout=60))["type"] == "feedback_saved"


def test_bidi_controls_in_visitor_text_do_not_reorder_the_admin(serve):
    server = serve("admin-bidi")
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    visitor_asks_and_votes(server)
    turn = Turn.objects.get()
    call = ToolCall.objects.filter(turn=turn).first()
    assert call is not None and "ZQ" in json.dumps(call.arguments)  # the search's query
    # (page, how many "ZQ" it shows: questions, comments, the search's arguments)
    pages = [
        ("/admin/agent/conversation/", 1),
        (f"/admin/agent/conversation/{turn.conversation_id}/change/", 3),
        ("/admin/agent/turn/", 2),  # the question, and the comment under its vote
        (f"/admin/agent/turn/{turn.pk}/change/", 2),
        ("/admin/agent/toolcall/", 1),
        (f"/admin/agent/toolcall/{call.pk}/change/", 1),
        ("/admin/agent/conversation/unanswered/", 3),
    ]

    seen = read_in_chromium(server, [path for path, _count in pages])

    assert seen == {path: [True] * count for path, count in pages}
