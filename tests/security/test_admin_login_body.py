"""A sign-in post is read for its user name only when it is the size of a sign-in form.

The sign-in throttle counts per user name, so it parses the posted form itself, and it does so
on the event loop before anything is counted (no CSRF token needed, and an address already cut
off is answered only after the parse). A form of 2.4 MB (just under Django's
DATA_UPLOAD_MAX_MEMORY_SIZE) of percent escapes took about a quarter of a CPU-second to parse
there, every visitor of the process waiting, once per post the request cap let through. A
sign-in form is a few hundred bytes: a larger post is refused (413) unread.
"""

import socket

import httpx
import pytest

from testing_support.waits import health_waits

pytestmark = pytest.mark.django_db(transaction=True)

POSTS = 4
BODY = b"username=" + b"%C3%A9" * 400_000  # 2.4 MB


def _post(port: int, path: str) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(BODY)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(head + BODY)
        return connection.recv(4096)


def test_an_oversized_sign_in_post_is_refused_unparsed(serve):
    server = serve("admin-login-body")
    _post(server.port, "/tags/none/")  # warm up
    before = server.cpu_seconds()
    for _ in range(POSTS):
        _post(server.port, "/tags/none/")  # the same bytes to a page (CSRF refuses them)
    elsewhere = server.cpu_seconds() - before

    with health_waits(server) as waits:
        before = server.cpu_seconds()
        answers = [_post(server.port, "/admin/login/") for _ in range(POSTS)]
        sign_in = server.cpu_seconds() - before

    assert all(answer.startswith(b"HTTP/1.1 413") for answer in answers), answers[0][:80]
    # Before: 403 (no CSRF token) after the parse, 1.1 CPU-seconds against 0.3 for the same
    # posts to a page, and /healthz waited up to 0.6 s.
    assert sign_in < elsewhere + 0.3, f"{sign_in:.2f} CPU-seconds against {elsewhere:.2f}"
    assert max(waits) < 0.3, f"/healthz waited {max(waits):.2f} s"
    with httpx.Client(base_url=server.url) as client:  # a real sign-in form is still read
        assert client.get("/admin/login/").status_code == 200
