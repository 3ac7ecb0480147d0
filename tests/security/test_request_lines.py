"""What daphne made of a request line (red team 39, leftovers of 38).

An absolute-form target (`GET http://evil.example/ HTTP/1.1`, which RFC 9112 says a server
must accept) was taken whole for the path: every such request was the site's 404, and the
site the app believed was the Host header's, whatever the URL named. The target's host is
the request's Host now (a host the site does not serve is refused as any such Host is), and
its path the path.

The API's 422 (and any status Twisted's 1999 table lacks: 429, 431) went out with the reason
phrase "Unknown Status", through nginx too, which passes the status line on.
"""

import re
import socket

import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)


def exchange(port: int, target: str, host: str) -> tuple[str, dict[str, str], bytes]:
    """One request with this target and Host; the status line, headers and body."""
    head = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        while chunk := sock.recv(65536):
            received += chunk
    top, _, body = received.partition(b"\r\n\r\n")
    status, *lines = top.decode("latin-1").split("\r\n")
    fields = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines}
    return status, fields, body


def links(feed: bytes) -> list[str]:
    return re.findall(r'<link href="([^"]*)"', feed.decode())


def deployed(serve, name: str):
    return serve(
        name,
        DJANGO_DEBUG="false",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
    )


def test_an_absolute_target_is_served_for_the_host_it_names(serve):
    server = deployed(serve, "absolute-targets")
    here = f"127.0.0.1:{server.port}"

    own = exchange(server.port, f"http://{here}/feed/", "127.0.0.1")
    elsewhere = exchange(server.port, "http://evil.example/feed/", here)
    with_query = exchange(server.port, f"http://{here}?page=2", "127.0.0.1")
    with_user = exchange(server.port, f"http://user:pw@{here}/feed/", here)
    plain = exchange(server.port, "/feed/", here)

    assert own[0] == plain[0] == "HTTP/1.1 200 OK"
    assert links(own[2]) == links(plain[2]) == [f"http://{here}/", f"http://{here}/feed/"]
    assert elsewhere[0].startswith("HTTP/1.1 400")  # evil.example is not an allowed host
    assert b"evil.example" not in elsewhere[2]
    assert with_query[0] == "HTTP/1.1 200 OK"  # the home page, page two
    assert with_user[0].startswith("HTTP/1.1 400")
    assert "Traceback" not in server.output()


def test_every_status_has_its_reason_phrase(serve):
    server = deployed(serve, "reason-phrases")
    here = f"127.0.0.1:{server.port}"

    invalid = exchange(server.port, "/api/articles?page=0", here)

    assert invalid[0] == "HTTP/1.1 422 Unprocessable Entity"
    assert invalid[1]["content-type"].startswith("application/json")
