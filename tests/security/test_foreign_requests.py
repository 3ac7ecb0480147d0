"""Another site's page cannot keep a visitor's address at 429.

Every request counts in its address's bucket (config/request_rate.py, and nginx in the
cluster). A page on any site makes its visitors' browsers send requests here (`<img>` tags,
say), and each spent the visitor's bucket: the site's own pages were then refused to everyone
behind the address, for as long as the foreign page stayed open. Requests a browser sends for
another site's page count in a smaller bucket of their own now; a client that labels its
requests so gets that smaller bucket, never none.
"""

import httpx
import pytest

from tests.security.test_request_rate import pipelined_statuses

pytestmark = pytest.mark.django_db(transaction=True)

VISITOR = "203.0.113.9"  # behind the trusted proxy
BURST = 20
FOREIGN_BURST = 5  # a quarter, HTTP_FOREIGN_REQUEST_SHARE's default
IMAGE = "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: image\r\n"
OWN_PAGE = {
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "X-Forwarded-For": VISITOR,
}


def pipelined(port: int, headers: str, count: int) -> list[int]:
    """`count` requests for `/healthz` from VISITOR, written at once; their statuses."""
    return pipelined_statuses(port, VISITOR, "/healthz", count, headers)


def test_a_foreign_page_does_not_keep_a_visitors_address_at_429(serve):
    server = serve(
        "foreign-requests",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.1",
    )

    images = pipelined(server.port, IMAGE, 3 * BURST)
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        own = [browser.get("/healthz", headers=OWN_PAGE).status_code for _ in range(BURST // 2)]
    # A client that labels its flood as another site's gets the smaller bucket, no more.
    labelled = pipelined(server.port, IMAGE, BURST)

    # Before: the images spent the address's 20 and the site's own requests got 429.
    assert FOREIGN_BURST <= images.count(200) <= FOREIGN_BURST + 1
    assert images.count(429) == len(images) - images.count(200) and len(images) == 3 * BURST
    assert own == [200] * (BURST // 2)
    assert labelled.count(200) <= 1


SIBLING_IMAGE = IMAGE.replace("cross-site", "same-site")  # a page of a sibling subdomain


def test_a_sibling_subdomains_page_does_not_keep_a_visitors_address_at_429(serve):
    server = serve(
        "same-site-requests",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.1",
    )

    images = pipelined(server.port, SIBLING_IMAGE, 3 * BURST)
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        own = [browser.get("/healthz", headers=OWN_PAGE).status_code for _ in range(BURST // 2)]

    # Before: the sibling's images counted as the visitor's own, spent all 20 (then 429) and
    # the site's own requests got 429 too.
    assert FOREIGN_BURST <= images.count(200) <= FOREIGN_BURST + 1
    assert own == [200] * (BURST // 2)
