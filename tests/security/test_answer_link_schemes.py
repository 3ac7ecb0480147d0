"""An answer's link that leaves the site is marked as leaving it in the admin's transcript.

The transcript marks a link to another host (an arrow, the host in its title, a new tab, no
referrer) when urlsplit finds a host in it. "[settings](https:evil.example/login)" has a
scheme and no host to urlsplit, so it was shown as one of the site's own links; a browser on
an http page reads it as https://evil.example/login (and one on an https page reads
"http:evil.example" the same way). A reviewer saw a site link that opened another site.
Chromium reads the live transcript and says where each link goes.
"""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from tests.agent.admin.factories import make_conversation, make_turn
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
ANSWER = (
    "Open [the settings](https:evil.example/login) or [the list](http:evil.example/list), "
    "[this page](/articles/) and [the docs](https://docs.example/)."
)
# For each link in the answer: does it leave the page's origin, and is it marked as leaving?
LINKS = """() => [...document.querySelectorAll('.dc-answer a')].map(
  (a) => [a.textContent, a.origin !== location.origin, a.classList.contains('dc-external')]
)"""


def test_links_that_leave_the_site_are_marked_in_the_transcript(serve):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    conversation = make_conversation()
    make_turn(conversation, index=1, user_message="where are the settings?", answer=ANSWER)
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    server = serve("answer-link-schemes")

    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = chromium.new_page()
        sign_in(page, server.url)
        page.goto(f"{server.url}/admin/agent/conversation/{conversation.pk}/change/")
        links = page.evaluate(LINKS)
        chromium.close()

    assert [label for label, *_ in links] == ["this page", "the docs"], links
    for label, leaves, marked in links:
        assert leaves == marked, (label, leaves, marked)
