"""What the cluster's nginx says about itself to anyone.

It named its exact version in every answer's Server header and at the foot of each page it
writes itself (a missing static file, a request past its burst, a body too large, a malformed
request): "nginx/1.22.1", a lookup key for its known flaws. And the static files it serves
carried none of the headers the web processes send with the same files.
"""

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing_support.live_server import free_port
from tests.security.test_proxy_connections import running_proxy

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)


def _answer(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.8", 0)) as c:
        c.sendall(request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
        c.settimeout(10)
        received = b""
        try:
            while chunk := c.recv(65536):
                received += chunk
        except ConnectionResetError:  # nginx resets a connection it refused the body of
            pass
        return received


def _server(answer: bytes) -> str:
    for line in answer.decode("latin-1").split("\r\n"):
        if line.lower().startswith("server:"):
            return line.split(":", 1)[1].strip()
    return ""


@pytest.fixture
def static_root(settings) -> Iterator[Path]:
    """A static root nginx's worker can read (it runs as `nobody` when started by root, and
    pytest's own temporary directories are the owner's alone)."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        root.chmod(0o755)
        settings.STATIC_ROOT = root
        yield root


def test_nginxs_own_answers_name_no_version(tmp_path, static_root):
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=1) as (port, _):
        answers = {
            "missing static file": _answer(port, b"GET /static/x.js HTTP/1.1\r\nHost: d\r\n\r\n"),
            "body too large": _answer(
                port,
                # Not the chat's post: one past its size is answered as the chat would (JSON).
                b"POST /admin/login/ HTTP/1.1\r\nHost: d\r\nContent-Length: 9999999\r\n\r\n",
            ),
            "chat body too large": _answer(
                port,
                b"POST /api/chat HTTP/1.1\r\nHost: d\r\nContent-Length: 9999999\r\n\r\n",
            ),
            "malformed": _answer(port, b"GET / HTTP/1.1\r\nHost: d\r\nBad Header\r\n\r\n"),
        }
        for _ in range(3):  # past the burst of one
            answers["past the burst"] = _answer(port, b"GET /ok HTTP/1.1\r\nHost: d\r\n\r\n")

    statuses = {name: int(answer.split(b" ")[1]) for name, answer in answers.items()}
    assert statuses == {
        "missing static file": 404,
        "body too large": 413,
        "chat body too large": 400,
        "malformed": 400,
        "past the burst": 429,
    }
    for name, answer in answers.items():
        assert _server(answer) == "nginx", name  # before: nginx/1.22.1
        assert b"nginx/" not in answer, name


def test_static_files_from_nginx_carry_the_headers_the_web_processes_send(tmp_path, static_root):
    (static_root / "chat.js").write_text("console.log(1)")
    (static_root / "chat.js").chmod(0o644)
    with running_proxy(tmp_path, host="127.0.0.1") as (port, _):
        answer = _answer(port, b"GET /static/chat.js HTTP/1.1\r\nHost: d\r\n\r\n")

    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").lower()
    assert head.startswith("http/1.1 200")
    assert "x-content-type-options: nosniff" in head
    assert "x-frame-options: deny" in head


# nginx's own answers to a page, each before anything reached a web process.
REFUSED_PAGES = {
    "malformed": (b"GET / HTTP/1.1\r\nHost: d\r\nBad Header\r\n\r\n", 400),
    "header too large": (b"GET / HTTP/1.1\r\nHost: d\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 400),
    # Past nginx's large_client_header_buffers (8 KB): a 500 in a named location, bare before.
    "request line too long": (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: d\r\n\r\n", 414),
    "body too large": (
        b"POST /admin/login/ HTTP/1.1\r\nHost: d\r\nContent-Length: 9999999\r\n\r\n",
        413,
    ),
    # A request line refused as malformed has no URI either: nginx's bare 500, as the 414 was.
    "a NUL in the address": (b"GET /\x00a HTTP/1.1\r\nHost: d\r\n\r\n", 400),
    "an address of *": (b"OPTIONS * HTTP/1.1\r\nHost: d\r\n\r\n", 400),
    "HTTP/0.9 named": (b"GET / HTTP/0.9\r\nHost: d\r\n\r\n", 400),
    "no version": (b"GET / FOO/1.1\r\nHost: d\r\n\r\n", 400),
    "a coding nginx does not decode": (
        b"POST / HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
    ),
    "HTTP/2.0 on the request line": (b"GET / HTTP/2.0\r\nHost: d\r\n\r\n", 505),
}


def test_nginxs_own_pages_carry_the_pages_headers(tmp_path, static_root):
    # They were its bare HTML pages, with none of the headers every page of the site carries
    # (nosniff, X-Frame-Options, a CSP): a scanner reads "no clickjacking protection".
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=1) as (port, _):
        answers = {name: _answer(port, request) for name, (request, _) in REFUSED_PAGES.items()}
        for _ in range(3):  # past the burst of one
            answers["past the burst"] = _answer(port, b"GET /ok HTTP/1.1\r\nHost: d\r\n\r\n")

    expected = {name: status for name, (_, status) in REFUSED_PAGES.items()}
    statuses = {name: int(answer.split(b" ")[1]) for name, answer in answers.items()}
    assert statuses == {**expected, "past the burst": 429}
    for name, answer in answers.items():
        head = answer.split(b"\r\n\r\n")[0].decode("latin-1").lower()
        assert "x-content-type-options: nosniff" in head, name
        assert "x-frame-options: deny" in head, name
        assert "content-security-policy: default-src 'none'; frame-ancestors 'none'" in head, name
    assert "retry-after: " in answers["past the burst"].decode("latin-1").lower()


def test_a_page_with_no_web_process_up_carries_the_pages_headers(tmp_path, static_root):
    with running_proxy(tmp_path, host="127.0.0.1", web_port=free_port()) as (port, _):
        answer = _answer(port, b"GET / HTTP/1.1\r\nHost: d\r\n\r\n")

    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").lower()
    assert head.startswith("http/1.1 502")  # nothing listens on the web process's port
    assert "x-frame-options: deny" in head and "frame-ancestors 'none'" in head
