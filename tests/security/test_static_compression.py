"""`make run` compresses static files, and only them.

The single process served chat.css (26 KB) and the panel's modules whole to a browser that
asked for gzip, slowing a reader on a slow line. Pages stay uncompressed: they carry the CSRF
token next to text a visitor can put in the URL, the shape a compression side channel (BREACH)
reads secrets through.
"""

import gzip
import http.client
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

STYLESHEET = Path(__file__).resolve().parents[2] / "static" / "chat.css"


def get(port: int, path: str, encoding: str) -> tuple[dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": "127.0.0.1", "Accept-Encoding": encoding})
        response = connection.getresponse()
        return dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_a_stylesheet_is_compressed_for_a_browser_that_asks(serve):
    server = serve("static-gzip")

    headers, body = get(server.port, "/static/chat.css", "gzip, deflate, br")
    plain_headers, plain = get(server.port, "/static/chat.css", "identity")

    assert headers.get("Content-Encoding") == "gzip"
    assert gzip.decompress(body) == plain == STYLESHEET.read_bytes()
    assert len(body) * 3 < len(plain)
    assert "Content-Encoding" not in plain_headers
    assert "Accept-Encoding" in headers.get("Vary", "")
    module_headers, _ = get(server.port, "/static/chat/panel.js", "gzip")
    assert module_headers.get("Content-Encoding") == "gzip"


def test_an_image_or_a_large_bundle_is_sent_as_it_is(serve):
    # Compressed per request, a 1.5 MB bundle cost 0.15 s of CPU for each (a 3.3 MB source
    # map 1.1 s): one address could keep the cores compressing. A PNG only grew.
    server = serve("static-plain")

    for path in ("/static/ninja/swagger-ui-bundle.js", "/static/ninja/favicon.png"):
        headers, body = get(server.port, path, "gzip")
        assert "Content-Encoding" not in headers, path
        assert int(headers["Content-Length"]) == len(body), path


def test_a_page_is_not_compressed(serve):
    server = serve("page-plain")

    headers, body = get(server.port, "/", "gzip")

    assert "Content-Encoding" not in headers
    assert b"<html" in body.lower()
