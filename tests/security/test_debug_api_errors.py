"""An API error with DEBUG on gives a visitor behind a proxy no traceback.

ninja answers an exception no handler maps with its own page when DEBUG is on: the traceback as
`text/plain`, a 500 returned like any answer. Django's debug pages are kept to `make run`'s own
user (config.middleware.DebugPageGuard), but this one carries neither their sentence nor an
exception the guard sees: behind a tunnel every visitor read the stack, the file paths and the
failing SQL of any fault (here a table gone from the database, as a half-applied migration
leaves it).
"""

import httpx
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _tag_table(name: str, to: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {name} RENAME TO {to}")  # noqa: S608 - fixed names


def test_an_api_fault_reaches_a_proxied_visitor_without_its_traceback(serve):
    server = serve("debug-api-errors")
    remote = {"X-Forwarded-For": "203.0.113.7"}  # through ngrok or cloudflared, from loopback

    _tag_table("blog_tag", "red19_tag_away")  # a real fault: the query fails in PostgreSQL
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            local = client.get("/api/articles", params={"tag": "python"})
            proxied = [
                client.get("/api/articles", params={"tag": "python"}, headers=remote),
                client.get(
                    "/api/articles",
                    params={"tag": "python"},
                    headers={**remote, "Accept": "text/plain"},
                ),
            ]
    finally:
        _tag_table("red19_tag_away", "blog_tag")

    assert local.status_code == 500 and "ProgrammingError" in local.text  # the local user sees
    for answer in proxied:
        # Before: 500, "Traceback (most recent call last): … ProgrammingError: relation …".
        assert answer.status_code == 500
        assert "Traceback" not in answer.text and "ProgrammingError" not in answer.text
        assert "blog_tag" not in answer.text and len(answer.content) < 2000
