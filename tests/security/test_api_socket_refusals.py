"""A request body refused at the socket is refused in JSON under /api/, as the API's errors are.

A body over HTTP_MAX_BODY_BYTES (413) and a chunked body (411) are refused at daphne's socket,
before Django runs (docent/http_guard.py), and the answer was plain text on every path: a client
of the API that posted too much read "The request body is larger than this server accepts." as
text/plain where every other /api/ error it can cause is `{"detail", "code"}`. Sent to a live
daphne; the pages keep the plain text.
"""

import json
import socket

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

TOO_LARGE = f"Content-Length: {5 * 1024 * 1024}"  # over HTTP_MAX_BODY_BYTES (4 MB)
CHUNKED = "Transfer-Encoding: chunked"


def refused(port: int, path: str, framing: str) -> tuple[str, dict[str, str], bytes]:
    """The server's answer to a POST of `path` whose head says `framing`, and nothing more."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(head.encode())
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    top, _, body = answer.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    return lines[0], dict(line.lower().split(": ", 1) for line in lines[1:]), body


def test_bodies_refused_at_the_socket_are_json_under_api_and_text_elsewhere(serve):
    server = serve("api-socket-refusals")
    large = refused(server.port, "/api/chat", TOO_LARGE)
    chunked = refused(server.port, "/api/conversations/x/turns/1/feedback", CHUNKED)
    page = refused(server.port, "/admin/login/", TOO_LARGE)

    # Before: text/plain, "The request body is larger than this server accepts.\n".
    assert large[0] == "HTTP/1.1 413 Content Too Large"
    assert large[1]["content-type"] == "application/json"
    assert json.loads(large[2]) == {
        "detail": "The request body is larger than this server accepts.",
        "code": "bad_request",
    }
    assert chunked[0] == "HTTP/1.1 411 Length Required"
    assert chunked[1]["content-type"] == "application/json"
    assert json.loads(chunked[2]) == {
        "detail": "Send the request body with a Content-Length.",
        "code": "bad_request",
    }
    for answer in (large, chunked, page):
        assert int(answer[1]["content-length"]) == len(answer[2])
        assert answer[1]["x-content-type-options"] == "nosniff"
    assert page[1]["content-type"] == "text/plain; charset=utf-8"
    assert page[2] == b"The request body is larger than this server accepts.\n"
