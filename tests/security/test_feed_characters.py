"""Red team 32: one article's title held a character XML cannot carry (a vertical tab pasted from
a word processor, which the admin's form keeps), and `/feed/` was a 500 for every reader until
it was edited. Against a live daphne, through the whole middleware stack."""

import xml.etree.ElementTree as ET

import httpx
import pytest

pytestmark = [pytest.mark.django_db(transaction=True)]

ATOM = "{http://www.w3.org/2005/Atom}"


def test_a_control_character_in_one_title_leaves_the_feed_readable(serve, make_article):
    make_article(title="Pasted\x0bheading", slug="pasted", summary="Form\x0cfeed and \x1b[31m")
    make_article(title="Plain", slug="plain", summary="Nothing odd.")
    server = serve("feed-characters")

    with httpx.Client(base_url=server.url, timeout=60) as client:
        response = client.get("/feed/")

    assert response.status_code == 200
    feed = ET.fromstring(response.content)  # noqa: S314 - our own feed, parsed strictly
    entries = {e.findtext(f"{ATOM}title"): e for e in feed.findall(f"{ATOM}entry")}
    assert set(entries) == {"Pasted heading", "Plain"}
    assert entries["Pasted heading"].findtext(f"{ATOM}summary") == "Form feed and  [31m"
