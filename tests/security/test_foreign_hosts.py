"""A request with a foreign Host header is a 400 and one short WARNING line, not a traceback.

Django logs a DisallowedHost (any refused suspicious request) at ERROR with its traceback: 30
lines, 2.2 kB, per request, and the message quotes the Host twice, so a 16 kB Host made a
32 kB line. Anyone could grow the error log as fast as they could send requests, and bury
real errors under them.
"""

import httpx
import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

HOSTS = ["evil.example", "127.0.0.1.evil.example", "x" * 5000 + ".example"]


def test_foreign_hosts_are_refused_with_one_short_warning_each(serve):
    server = serve(
        "foreign-hosts",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
    )

    with httpx.Client(base_url=server.url) as client:
        statuses = [
            client.get(path, headers={"Host": host}).status_code
            for host in HOSTS
            for path in ("/", "/api/search?q=x", "/admin/")
        ]
    server.stop()
    output = server.output()
    lines = [line for line in output.splitlines() if "DisallowedHost" in line]

    assert statuses == [400] * 9
    assert "Traceback" not in output  # before: one per request, 30 lines each
    assert len(lines) == 9
    assert all(" WARNING django.security.DisallowedHost: " in line for line in lines)
    assert max(len(line) for line in lines) < 400  # before: 10,100 for the long Host


def test_a_long_path_that_is_not_found_writes_a_short_line(serve):
    # Django logs "Not Found: <path>" for every 404, the path as sent: a 10,000-character path
    # wrote a 10,000-character line, as fast as the client could ask.
    server = serve("long-paths")
    long_name = "a" * 10_000

    with httpx.Client(base_url=server.url) as client:
        statuses = [client.get(f"{prefix}{long_name}").status_code for prefix in ("/", "/api/")]
    server.stop()
    lines = [line for line in server.output().splitlines() if "Not Found: " in line]

    assert statuses == [404, 404]
    assert len(lines) == 2
    assert max(len(line) for line in lines) < 400
