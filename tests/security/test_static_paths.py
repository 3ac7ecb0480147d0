"""Paths that climb out of /static/ get a client error, never daphne's 500.

Django's static handler answered a missing file with 404 but let `SuspiciousFileOperation`
through: every `..` probe was a "500 Internal Server Error" and a traceback in the log.
"""

import http.client

import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

CLIMBS = [
    "/static/../config/settings.py",
    "/static/..%2fconfig/settings.py",
    "/static/%2e%2e/%2e%2e/etc/passwd",
    "/static/chat/../../manage.py",
]


def raw_get(port: int, path: str) -> tuple[int, str]:
    """GET `path` exactly as written (clients normally fold the `..` away first)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": "127.0.0.1"})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_paths_outside_the_static_root_are_refused_without_a_server_error(serve):
    deployed = {"DJANGO_SECRET_KEY": PROD_KEY, "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    server = serve(
        "static-climb", DJANGO_DEBUG="false", DJANGO_SECURE_SSL_REDIRECT="false", **deployed
    )

    answers = {path: raw_get(server.port, path) for path in CLIMBS}
    still_served = raw_get(server.port, "/static/site.css")

    for path, (status, body) in answers.items():
        assert 400 <= status < 500, (path, status)
        assert "SECRET_KEY" not in body and "root:" not in body and "Traceback" not in body
    assert still_served[0] == 200
    assert "Exception inside application" not in server.output()
    assert "Traceback" not in server.output()


def test_a_refused_static_path_cannot_write_a_line_of_its_own_into_the_log(serve):
    # The refusal quoted the exception's text, the path raw: "%0a" in the URL began a new log
    # line that said what the client liked (and the text named the server's directories).
    server = serve("static-forged-line")

    status, _ = raw_get(server.port, "/static/..%2f%0a2026-12-04%2000:00:00,000%20ERROR%20forged")
    lines = server.output().splitlines()

    assert status == 400
    assert not [line for line in lines if line.startswith("2026-12-04 00:00:00,000 ERROR")]
    refused = [line for line in lines if "refused a static path" in line]
    assert refused and refused[0].endswith(r"/static/../\n2026-12-04 00:00:00,000 ERROR forged")
    assert str(server.log_path.parents[1]) not in refused[0]  # the server's own directories


def test_a_scanner_of_static_paths_writes_one_line_not_one_per_probe(serve):
    # A static request weighs a quarter of a page's under the request rate: a scanner of `..`
    # paths wrote a WARNING line per probe, 40 a second from one address.
    server = serve("static-scan")

    answers = [raw_get(server.port, f"/static/..%2fprobe{n}") for n in range(30)]
    refused = [line for line in server.output().splitlines() if "refused a static path" in line]

    assert {status for status, _ in answers} == {400}
    assert len(refused) == 1 and refused[0].endswith("/static/../probe0")
