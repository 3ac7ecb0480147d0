"""An answer's link written with three or more slashes is marked as leaving the site.

The admin transcript marks a link to another host when urlsplit finds a host in it.
"[the settings](///evil.example/login)" has none for urlsplit (an empty host, then the path
"/evil.example/login"), so the transcript showed it as one of the site's own links, unmarked;
a browser reads any run of slashes after a web page's origin as "//" (the URL standard skips
the extra ones), and Chromium went to http://evil.example/login. The chat panel resolves links
with the browser's own URL and marked it already. A model steered by a visitor or by a page it
quoted writes the answer; here a scripted model does, in a live turn, and Chromium reads the
live transcript and says where each link goes.
"""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from agent.models import Conversation
from testing_support.model_server import text_response
from tests.security.clients import sse_post
from tests.security.conftest import model_env

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
ANSWER = (
    "Open [the settings](///evil.example/login), [the list](////evil.example/list) "
    "or [this page](/articles/)."
)
# For each link in the answer: where it goes, and whether it is marked as leaving the site.
LINKS = """() => [...document.querySelectorAll('.dc-answer a')].map(
  (a) => [a.textContent, a.host, a.origin !== location.origin, a.classList.contains('dc-external')]
)"""


def test_a_link_of_many_slashes_is_marked_as_leaving_the_site(serve, scripted):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    scripted.enqueue(text_response([ANSWER]))
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    server = serve("answer-link-slashes", **model_env(scripted))

    response, events = sse_post(server, {"content": "Where are the settings?"})
    assert response.status_code == 200 and events[-1]["type"] == "done", events[-1]
    server.stop()  # drains the save
    server = serve("answer-link-slashes-admin")
    conversation = Conversation.objects.get()
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = chromium.new_page()
        page.goto(f"{server.url}/admin/login/?next=/admin/")
        page.fill("#id_username", "editor")
        page.fill("#id_password", "a-long-password")
        page.click("input[type=submit]")
        page.wait_for_url(f"{server.url}/admin/")
        page.goto(f"{server.url}/admin/agent/conversation/{conversation.pk}/change/")
        links = page.evaluate(LINKS)
        chromium.close()

    assert [label for label, *_ in links] == ["the settings", "the list", "this page"], links
    hosts = {label: host for label, host, *_ in links}
    assert hosts["the settings"] == hosts["the list"] == "evil.example", links  # as Chromium goes
    for label, _host, leaves, marked in links:
        assert leaves == marked, (label, leaves, marked)
