"""A form body is not parsed by daphne's HTTP layer, which has no use for it.

Twisted's `Request.requestReceived` parses every POST body sent as
`application/x-www-form-urlencoded` or `multipart/form-data` into `request.args`, on the
reactor thread, before daphne hands the request to the application; daphne never reads
`args`. So any POST, to any path (a static file, a 404, a route that refuses it at once), cost
what parsing it cost: 4 MB of `a&a&…` (two million fields) took 2 CPU-seconds and `/healthz`
waited 4.9 s behind it; 65,000 multipart parts, 2.1 and 5.9 s. It happened before the request
cap counted the request (a refused one was parsed as well), and a kept-alive connection can
send one after another. Django parses the forms it needs, in the view's thread, within
DATA_UPLOAD_MAX_NUMBER_FIELDS.
"""

import socket

import pytest

from testing_support.waits import health_waits

pytestmark = pytest.mark.django_db(transaction=True)

BODY_BYTES = 2 * 1024 * 1024  # within HTTP_MAX_BODY_BYTES (4 MB)


def _post(port: int, body: bytes, content_type: str) -> bytes:
    head = (
        f"POST /static/site.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(head + body)
        return connection.recv(4096)


def _fields() -> bytes:
    return b"a&" * (BODY_BYTES // 2)


def _parts() -> bytes:
    part = b'--XyZ\r\nContent-Disposition: form-data; name="f"\r\n\r\nx\r\n'
    return part * (BODY_BYTES // len(part)) + b"--XyZ--\r\n"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (_fields, "application/x-www-form-urlencoded"),
        (_parts, "multipart/form-data; boundary=XyZ"),
    ],
    ids=["urlencoded", "multipart"],
)
def test_a_form_body_costs_what_any_body_costs(serve, body, content_type):
    server = serve("form-bodies")
    payload = body()
    _post(server.port, payload, "application/octet-stream")  # warm: first request's imports
    before = server.cpu_seconds()
    _post(server.port, payload, "application/octet-stream")
    plain = server.cpu_seconds() - before

    with health_waits(server) as waits:
        before = server.cpu_seconds()
        answer = _post(server.port, payload, content_type)
        form = server.cpu_seconds() - before

    # Refused, as any POST to a static file is (they answer GET and HEAD only: test_methods.py);
    # the body's cost is what is measured, and it was parsed before any refusal.
    assert answer.startswith(b"HTTP/1.1 405"), answer[:80]
    # Before: about 1 CPU-second for 2 MB of either form (0.05 for the same bytes as a plain
    # body), and /healthz waited 2 to 3 s.
    assert form < plain + 0.3, f"{form:.2f} CPU-seconds for the form, {plain:.2f} plain"
    assert max(waits) < 0.5, f"/healthz waited {max(waits):.2f} s"
