"""Every /api/ error a client can cause is JSON, in the shape the API's routes use.

`/api/nope` answered the blog's HTML 404 page, TRACE a bare text/plain 405, and a fault no
route handled the site's HTML 500 page: a client that parses JSON read markup. Sent to a live
daphne; the pages outside /api/ keep their HTML.
"""

import httpx
import pytest
from django.db import connection

from tests.agent.test_persistence import database_outage  # noqa: F401 - a fixture
from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

NOT_FOUND = {"detail": "Not found."}
NOT_ALLOWED = {"detail": "Method not allowed.", "code": "method_not_allowed"}
SERVER_ERROR = {"detail": "Something went wrong on our side. Please try again.", "code": "internal"}
UNAVAILABLE = {"detail": "The database is unavailable right now. Please try again."}


# `make run` (DEBUG on, this machine's own browser) and a deployment (DEBUG off).
MODES = {
    "make-run": {},
    "deployed": {"DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": PROD_KEY,
                 "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "DJANGO_SECURE_SSL_REDIRECT": "false"},
}  # fmt: skip


def assert_json(response: httpx.Response, status: int, body: dict) -> None:
    assert (response.status_code, response.json()) == (status, body)
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("mode", MODES)
def test_client_errors_under_api_are_json_and_the_pages_stay_html(serve, mode):
    server = serve(f"api-errors-{mode}", **MODES[mode])
    with httpx.Client(base_url=server.url) as client:
        for path in ["/api/nope", "/api/articles/", "/api/%ff", "/api/nope/deeper?x=1"]:
            assert_json(client.get(path), 404, NOT_FOUND)
        assert_json(client.get("/api/articles/no-such-article"), 404, NOT_FOUND)  # as before
        # A method a route lacks, and one the site refuses everywhere.
        assert_json(client.get("/api/chat"), 405, NOT_ALLOWED)
        refused = client.request("TRACE", "/api/articles")
        assert_json(refused, 405, NOT_ALLOWED)
        assert "GET" in refused.headers["allow"]
        # A Host the site does not serve: Django's 400.
        assert_json(client.get("/api/articles", headers={"host": "evil.example"}), 400,
                    {"detail": "Bad request.", "code": "bad_request"})  # fmt: skip

        # A write that is not JSON, to any /api/ path: refused, and told so of the API.
        for path in ["/api/nope", "/api/feedback"]:
            form = client.post(path, content="x=1", headers={"content-type": "text/plain"})
            assert_json(form, 403, {"detail": "The API accepts application/json only."})

        page = client.get("/nope")
        trace = client.request("TRACE", "/")
        bad_host = client.get("/", headers={"host": "evil.example"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<!doctype html>" in page.text.lower()
    assert (trace.status_code, trace.headers["content-type"]) == (405, "text/plain")
    assert (
        bad_host.status_code == 400 and "application/json" not in bad_host.headers["content-type"]
    )


def test_a_real_fault_under_api_is_a_json_500_and_a_page_keeps_its_html_500(serve):
    # The schema out of step with the code (a rolled-back deploy, say): the articles table is
    # gone, which no route handles, so the fault reaches Django's 500 handler. Deployed: with
    # DEBUG on, this machine's own browser is shown the traceback, as on the pages.
    server = serve("api-fault", **MODES["deployed"])
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE blog_article RENAME TO blog_article_away")
    try:
        with httpx.Client(base_url=server.url) as client:
            api = client.get("/api/articles")
            page = client.get("/")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE blog_article_away RENAME TO blog_article")

    assert_json(api, 500, SERVER_ERROR)
    assert api.headers["cache-control"] == "no-store"
    assert "Traceback" not in api.text and "blog_article" not in api.text
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")


def test_a_stopped_database_leaves_every_api_error_json(serve, database_outage):  # noqa: F811
    server = serve("api-outage")
    with httpx.Client(base_url=server.url) as client:
        database_outage.begin()
        client.cookies.set("sessionid", "a" * 32)  # a returning visitor: their session is read
        try:
            outage = client.get("/api/articles")
            missing = client.get("/api/nope")
            wrong = client.get("/api/chat")
        finally:
            database_outage.end()

    assert_json(outage, 503, UNAVAILABLE)
    assert_json(missing, 404, NOT_FOUND)
    assert_json(wrong, 405, NOT_ALLOWED)
