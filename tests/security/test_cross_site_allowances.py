"""Another site's page cannot spend a visitor's allowances through the visitor's browser.

Searches, transcript reads and admin sign-in attempts are counted per address. A page on any
site can make its visitors' browsers send requests here (an `<img>` pointing at `/api/search`, a
form posted to `/admin/login/`): each was counted against the visitor's address, and against
everyone's behind the same address, without the attacker ever reaching the site.
"""

import uuid

import httpx
import pytest
from django.contrib.auth import get_user_model

from tests.security.test_admin_sign_in import LOGIN, attempt

pytestmark = pytest.mark.django_db(transaction=True)

EVIL = "https://evil.example"
# What a browser sends for an image another site's page loads, and for a form it posts.
IMAGE = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
FORM = {"Origin": EVIL, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
# A link the visitor clicked on another site's page; an iframe that page loads by itself; a
# window it opened and then sends elsewhere, as often as it likes, with no click.
FOLLOWED = {
    "Sec-Fetch-Site": "cross-site",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Dest": "document",
    "Sec-Fetch-User": "?1",
}
NAVIGATED = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
FRAME = {**NAVIGATED, "Sec-Fetch-Dest": "iframe"}
STEERED = {**NAVIGATED, "Sec-Fetch-Dest": "document"}
OWN_PAGE = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}


def test_a_foreign_form_does_not_lock_an_editor_out_of_the_admin(serve):
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    server = serve("cross-site-sign-in", ADMIN_LOGIN_ATTEMPTS="3")

    with httpx.Client(base_url=server.url, follow_redirects=False) as browser:
        # The attacker's page, open in a browser behind the editor's address, posts the form.
        posted = [
            browser.post(LOGIN, data={"username": "editor", "password": "x"}, headers=FORM)
            for _ in range(5)
        ]
        signed_in = attempt(browser, "editor", "right-pw")

    # Before: the posts were counted (403, 403, 403, then 429) and the editor, right password,
    # was refused for 15 minutes.
    assert [response.status_code for response in posted] == [403] * 5
    assert signed_in.status_code == 302


def test_foreign_pages_do_not_spend_an_addresss_searches_or_transcript_reads(serve):
    server = serve(
        "cross-site-reads",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="3",
        AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="3",
    )
    transcript = f"/api/conversations/{uuid.uuid4()}"

    with httpx.Client(base_url=server.url) as browser:
        images = [browser.get("/api/search", params={"q": "hnsw"}, headers=IMAGE) for _ in range(5)]
        images += [browser.get(transcript, headers=IMAGE) for _ in range(5)]
        fetched = browser.get("/api/search", params={"q": "hnsw"}, headers={"Origin": EVIL})
        search = browser.get("/api/search", params={"q": "hnsw"}, headers=OWN_PAGE)
        read = browser.get(transcript, headers=OWN_PAGE)
        followed = browser.get(  # a link to the API followed from another site still opens
            "/api/search",
            params={"q": "hnsw"},
            headers=FOLLOWED,
        )

    # Before: the images spent both allowances, and the site's own page got 429 for each.
    assert {response.status_code for response in images} == {403}
    assert fetched.status_code == 403
    assert search.status_code == 200
    assert read.status_code == 404  # the read was counted and made: no such conversation here
    assert followed.status_code == 200


def test_foreign_frames_and_steered_windows_do_not_spend_an_addresss_searches(serve):
    server = serve("cross-site-frames", SEARCH_REQUESTS_PER_MINUTE_PER_IP="3")
    query = {"q": "hnsw"}

    with httpx.Client(base_url=server.url, timeout=60) as browser:
        frames = [browser.get("/api/search", params=query, headers=FRAME) for _ in range(5)]
        steered = [browser.get("/api/search", params=query, headers=STEERED) for _ in range(5)]
        search = browser.get("/api/search", params=query, headers=OWN_PAGE)
        followed = browser.get("/api/search", params=query, headers=FOLLOWED)

    # Before: a navigation of any kind passed as a followed link; the five frames spent the
    # three searches and the site's own page got 429, as did everything after it.
    assert {response.status_code for response in frames + steered} == {403}
    assert search.status_code == 200
    assert followed.status_code == 200


# What a browser sends for an image on a page of a sibling subdomain (evil.example.com beside
# blog.example.com: one registrable domain, so "same-site"), and for a link clicked there.
SIBLING_IMAGE = {**IMAGE, "Sec-Fetch-Site": "same-site"}
SIBLING_FOLLOWED = {**FOLLOWED, "Sec-Fetch-Site": "same-site"}


def test_a_sibling_subdomains_page_does_not_spend_an_addresss_searches(serve):
    server = serve(
        "same-site-reads",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="3",
        AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="3",
    )
    transcript = f"/api/conversations/{uuid.uuid4()}"
    query = {"q": "hnsw"}

    with httpx.Client(base_url=server.url, timeout=60) as browser:
        images = [browser.get("/api/search", params=query, headers=SIBLING_IMAGE) for _ in range(5)]
        images += [browser.get(transcript, headers=SIBLING_IMAGE) for _ in range(5)]
        search = browser.get("/api/search", params=query, headers=OWN_PAGE)
        read = browser.get(transcript, headers=OWN_PAGE)
        followed = browser.get("/api/search", params=query, headers=SIBLING_FOLLOWED)

    # Before: only "cross-site" was another site's; the sibling's images (no Origin on an
    # image) spent both allowances ({200, 429} and {404, 429}) and the site's own got 429.
    assert {response.status_code for response in images} == {403}
    assert search.status_code == 200
    assert read.status_code == 404
    assert followed.status_code == 200
