"""Every answer carries the pages' security headers, not only the pages.

Static files are served outside Django's middleware, and the URL guard and the rate limits
answered before the header middleware ran: a stylesheet, the SVG icon, a refused `..` path, a
URL with a NUL (400) and a refused search (429) came without nosniff, CSP or X-Frame-Options.
"""

import http.client

import pytest

from tests.security.conftest import PROD_KEY
from tests.security.test_static_paths import CLIMBS

pytestmark = pytest.mark.django_db(transaction=True)

PAGE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def raw_headers(port: int, path: str) -> tuple[int, dict[str, str]]:
    """GET `path` exactly as written; the status and headers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": "127.0.0.1"})
        response = connection.getresponse()
        response.read()
        return response.status, dict(response.getheaders())
    finally:
        connection.close()


def test_static_files_and_early_refusals_carry_the_security_headers(serve):
    deployed = {"DJANGO_SECRET_KEY": PROD_KEY, "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    server = serve(
        "headers",
        DJANGO_DEBUG="false",
        DJANGO_SECURE_SSL_REDIRECT="false",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="1",
        **deployed,
    )
    paths = {
        "/": 200,
        "/static/site.css": 200,
        "/static/favicon.svg": 200,
        "/static/no-such-file.css": 404,
        CLIMBS[1]: 400,
        "/articles/%00/": 400,
        "/api/search?q=%00": 400,
        "/api/search?q=docent": 200,
        "/api/search?q=again": 429,
    }

    answers = {path: raw_headers(server.port, path) for path in paths}

    for path, (status, headers) in answers.items():
        assert status == paths[path], (path, status)
        for name, value in PAGE_HEADERS.items():
            assert headers.get(name) == value, (path, name, headers)
        assert "frame-ancestors 'none'" in headers.get("Content-Security-Policy", ""), path
