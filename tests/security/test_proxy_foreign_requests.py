"""The cluster's nginx counts what another site's page sends in buckets of its own, as the web
processes do (config/request_rate.py): such a page kept its visitors' address at nginx's 429."""

import shutil
import socket
from pathlib import Path

import pytest

from tests.security.test_proxy_connections import running_proxy, status_read

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
BURST = 8
FOREIGN_BURST = 2  # a quarter, HTTP_FOREIGN_REQUEST_SHARE's default
IMAGE = "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: image\r\n"
OWN_PAGE = "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n"
FOLLOWED = (
    "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n"
    "Sec-Fetch-User: ?1\r\n"
)


def asked(port: int, source: str, headers: str) -> int:
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as connection:
        connection.sendall(f"GET /ok HTTP/1.1\r\nHost: docent\r\n{headers}\r\n".encode())
        return status_read(connection)


def test_a_foreign_page_does_not_keep_a_visitors_address_at_429(tmp_path: Path, settings):
    settings.HTTP_REQUESTS_PER_SECOND_PER_IP = 0.1  # refilled once a minute for another site's
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=BURST) as (port, _):
        images = [asked(port, "127.0.0.6", IMAGE) for _ in range(3 * BURST)]
        own = [asked(port, "127.0.0.6", OWN_PAGE) for _ in range(BURST // 2)]
        followed = asked(port, "127.0.0.6", FOLLOWED)  # a link clicked: the address's bucket
        # A client that labels its flood as another site's gets the smaller bucket, no more.
        labelled = [asked(port, "127.0.0.7", IMAGE) for _ in range(BURST)]

    # Before: the images spent the address's 8, and its own pages got 429 from nginx.
    assert images[:FOREIGN_BURST] == [200] * FOREIGN_BURST
    assert images.count(200) <= FOREIGN_BURST + 1
    assert own == [200] * (BURST // 2)
    assert followed == 200
    assert labelled.count(200) <= FOREIGN_BURST + 1 and labelled[-BURST // 2 :] == [429] * 4


def test_a_sibling_subdomains_page_does_not_keep_a_visitors_address_at_429(
    tmp_path: Path, settings
):
    settings.HTTP_REQUESTS_PER_SECOND_PER_IP = 0.1
    sibling_image = IMAGE.replace("cross-site", "same-site")
    sibling_followed = FOLLOWED.replace("cross-site", "same-site")
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=BURST) as (port, _):
        images = [asked(port, "127.0.0.8", sibling_image) for _ in range(3 * BURST)]
        own = [asked(port, "127.0.0.8", OWN_PAGE) for _ in range(BURST // 2)]
        followed = asked(port, "127.0.0.8", sibling_followed)

    # Before: nginx took only "cross-site" for another site's; the sibling's images spent the
    # address's 8 and its own pages got nginx's 429.
    assert images.count(200) <= FOREIGN_BURST + 1
    assert own == [200] * (BURST // 2)
    assert followed == 200
