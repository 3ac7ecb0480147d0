"""The feed's links name the port the visitor reached, not the one its Host header wrote.

Every link and entry id in `/feed/` is absolute, made from the Host, and the feed is cached as
public for five minutes with one ETag whatever the Host: `Host: blog.example:6666` (an allowed
host, any port) answered a feed whose every link and id pointed at port 6666, for a shared cache
to hand to every reader (a cache that keys on the host without its port). A port is kept now
only when it is the one the request arrived on (red team 39, a leftover of 38).
"""

import re

import httpx
import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)


def feed_links(url: str, host: str) -> list[str]:
    response = httpx.get(url + "/feed/", headers={"Host": host}, timeout=20)
    assert response.status_code == 200
    return re.findall(r'<link href="([^"]*)"', response.text)


def test_a_host_port_the_visitor_did_not_reach_is_left_out_of_the_feed(serve):
    server = serve(
        "feed-ports",
        DJANGO_DEBUG="false",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1,blog.example",
    )

    forged = feed_links(server.url, "blog.example:6666")
    own = feed_links(server.url, f"127.0.0.1:{server.port}")
    bare = feed_links(server.url, "blog.example")

    assert forged == ["http://blog.example/", "http://blog.example/feed/"]
    assert own == [f"http://127.0.0.1:{server.port}/", f"http://127.0.0.1:{server.port}/feed/"]
    assert bare == ["http://blog.example/", "http://blog.example/feed/"]
