"""Behind the cluster's nginx, the errors nginx itself writes under /api/ are JSON too.

A web process answers a refused /api/ request in JSON (`{"detail": …}`, config/request_rate.py
and config/api_errors.py), but in the cluster nginx refuses first: past an address's request
burst every /api/ route got nginx's HTML "429 Too Many Requests" page (no Retry-After), a body
past nginx's 1 MB its HTML 413, and with no web process up its HTML 502. A client that parses the
API's errors read markup, and only behind nginx. Sent through the real nginx configuration.
"""

import json
import shutil
import socket
from pathlib import Path

import pytest

from testing_support.live_server import free_port
from tests.security.test_proxy_connections import running_proxy

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
BURST = 2
TOO_MANY = {"detail": "Too many requests from your address. Try again in a moment."}


def sent(port: int, source: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """One request from `source`: the status, the headers (lower-case names) and the body."""
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as connection:
        connection.settimeout(30)
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: docent\r\nConnection: close\r\n\r\n".encode()


def post(path: str, size: int) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: docent\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    )
    return head.encode() + b" " * size


def assert_api_json(answer: tuple[int, dict[str, str], bytes], status: int) -> dict:
    code, headers, body = answer
    assert (code, headers["content-type"]) == (status, "application/json")
    assert headers["x-content-type-options"] == "nosniff"
    # Like every other answer of the site's: never cached, never framed, nothing run from it.
    assert headers["cache-control"] == "no-store"
    assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    return json.loads(body)


def test_nginx_refusals_under_api_are_json(tmp_path: Path, settings):
    settings.HTTP_REQUESTS_PER_SECOND_PER_IP = 0.1  # no refill while the test runs
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=BURST) as (port, _):
        searches = [sent(port, "127.0.0.11", get("/api/search?q=x")) for _ in range(3 * BURST)]
        chats = [sent(port, "127.0.0.12", post("/api/chat", 2)) for _ in range(3 * BURST)]
        page = [sent(port, "127.0.0.13", get("/")) for _ in range(3 * BURST)][-1]
        too_large = sent(port, "127.0.0.14", post("/api/feedback", 2 * 1024 * 1024))

    # Before: 429 text/html, nginx's page, with no Retry-After.
    for refused in (searches[-1], chats[-1]):
        assert assert_api_json(refused, 429) == TOO_MANY
        assert refused[1]["retry-after"] == "10"  # one request's refill at 0.1 a second
    assert page[0] == 429 and "application/json" not in page[1]["content-type"]
    # Before: 413 text/html, past nginx's 1 MB (the web process answers as the socket does).
    assert assert_api_json(too_large, 413) == {
        "detail": "The request body is larger than this server accepts.",
        "code": "bad_request",
    }


def test_nginx_with_no_web_process_answers_api_requests_in_json(tmp_path: Path):
    nobody = free_port()  # nothing listens there: every request is nginx's 502
    with running_proxy(tmp_path, host="127.0.0.1", web_port=nobody) as (port, _):
        search = sent(port, "127.0.0.15", get("/api/search?q=x"))
        chat = sent(port, "127.0.0.15", post("/api/chat", 2))
        page = sent(port, "127.0.0.15", get("/"))

    # Before: 502 text/html.
    for answer in (search, chat):
        assert assert_api_json(answer, 502) == {
            "detail": "The site is not answering right now. Please try again in a moment.",
            "code": "unavailable",
        }
    assert page[0] == 502 and "application/json" not in page[1]["content-type"]


def page_get(path: str, headers: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: docent\r\nConnection: close\r\n{headers}\r\n".encode()


def test_nginx_with_no_web_process_answers_a_page_that_says_so_and_tries_again(tmp_path: Path):
    # While a web process restarts, or every one is down (and while `make run WORKERS=2`
    # started, 22 s after it printed "Docent is serving on"), a page was nginx's "502 Bad
    # Gateway": nothing to say what was going on, nor that waiting would help.
    nobody = free_port()
    asks = {
        "": "en",
        "Accept-Language: zh-CN,zh;q=0.9\r\n": "zh-hans",
        "Accept-Language: zh-TW,zh;q=0.9\r\n": "zh-hant",
        "Accept-Language: en-US,zh-CN;q=0.8\r\n": "en",
        # The site's language switch (one cookie) wins over the browser's.
        "Accept-Language: en-US\r\nCookie: django_language=zh-hant\r\n": "zh-hant",
    }
    with running_proxy(tmp_path, host="127.0.0.1", web_port=nobody) as (port, _):
        pages = {h: sent(port, "127.0.0.16", page_get("/articles/x/", h)) for h in asks}

    titles = {
        "en": "Docent is starting or restarting",
        "zh-hans": "Docent 正在启动或重启",
        "zh-hant": "Docent 正在啟動或重啟",
    }
    for headers, language in asks.items():
        status, sent_headers, body = pages[headers]
        page = body.decode()
        assert status == 502
        assert sent_headers["content-type"] == "text/html; charset=utf-8"
        assert sent_headers["retry-after"] == "5" and sent_headers["cache-control"] == "no-store"
        assert "default-src 'none'" in sent_headers["content-security-policy"]
        assert f'<html lang="{language}">' in page
        assert f"<h1>{titles[language]}</h1>" in page
        assert '<meta http-equiv="refresh" content="5">' in page
        assert "Bad Gateway" not in page
    assert "every 5 seconds" in pages[""][2].decode()
