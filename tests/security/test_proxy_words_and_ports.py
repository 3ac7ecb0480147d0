"""What the cluster's nginx writes itself, and the port it reports (red team 39).

nginx's own refusals (414, 501, 505) are plain text, and their words were rendered from a
Django template that escaped them for HTML: "The request&#x27;s address is longer than this
server accepts." The feed keeps a Host's port only when the visitor reached that port
(test_feed_ports.py); behind nginx the web process listens on a loopback port of its own, so
nginx reports the port the visitor reached (X-Forwarded-Port, believed from it alone).
"""

import re
import shutil
import socket

import httpx
import pytest
from django.db import connection

from docent.cluster import nginx_conf
from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
    ),
]

VISITOR = "127.0.0.2"  # counted by nginx as a visitor (only 127.0.0.1 is this machine)


def exchange(port: int, head: bytes) -> tuple[str, bytes]:
    received = b""
    with socket.create_connection(("127.0.0.1", port), source_address=(VISITOR, 0)) as sock:
        sock.sendall(head)
        while chunk := sock.recv(65536):
            received += chunk
    top, _, body = received.partition(b"\r\n\r\n")
    return top.split(b"\r\n")[0].decode("latin-1"), body


def feed_links(url: str, host: str, **headers: str) -> list[str]:
    response = httpx.get(url + "/feed/", headers={"Host": host, **headers}, timeout=20)
    assert response.status_code == 200
    return re.findall(r'<link href="([^"]*)"', response.text)


def test_nginx_words_are_plain_text_and_the_feed_names_nginx_port(tmp_path):
    database = database_url(connection.settings_dict["NAME"])
    with LocalCluster(database, tmp_path, workers=1) as cluster:
        port = cluster.port
        long_target = exchange(port, b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        version = exchange(port, b"GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n")
        own = feed_links(cluster.url, f"127.0.0.1:{port}")
        forged = feed_links(cluster.url, "127.0.0.1:6666", **{"X-Forwarded-Port": "6666"})
        straight = feed_links(
            f"http://127.0.0.1:{cluster.webs[0].port}",
            "127.0.0.1:6666",
            **{"X-Forwarded-Port": "6666"},
        )

    assert long_target == (
        "HTTP/1.1 414 Request-URI Too Large",
        b"The request's address is longer than this server accepts.\n",
    )
    assert version[1] == b"The request's HTTP version is not supported.\n"
    assert own == [f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/feed/"]
    assert forged == ["http://127.0.0.1/", "http://127.0.0.1/feed/"]  # nginx says its own port
    assert straight == ["http://127.0.0.1/", "http://127.0.0.1/feed/"]  # no secret, no port


def test_the_configuration_is_not_escaped_for_html(tmp_path):
    # Without starting nginx: the words it answers with are written into its configuration.
    conf = nginx_conf(prefix=tmp_path, web_ports=[1], host="127.0.0.1", port=2)

    assert "The request's address is longer than this server accepts." in conf
    assert "&#" not in conf.replace("&#36;", "").replace("&#92;", "")  # nginx_html's own
