"""Malformed URLs get a 4xx, never a 500 (with DEBUG on, a 500 is a traceback with settings)."""

import httpx
import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

ATTACKS = [
    "/api/articles/%00",  # NUL in a slug: PostgreSQL refuses it
    "/api/articles?tag=%00",
    "/api/articles?tag=x&%00=1",
    "/api/search?q=docent%00",
    "/api/articles?page=99999999999999999999",  # OFFSET past a bigint
    "/?page=%00",
    "/articles/%00/",
    # Past DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000): with DEBUG on, the debug page for the refusal
    # read the query again and failed, and daphne answered 500 with a traceback in the log.
    "/?" + "&".join(f"f{n}=1" for n in range(1001)),
    "/api/search?q=x&" + "&".join(f"f{n}=1" for n in range(1001)),
]


@pytest.mark.parametrize("debug", ["true", "false"])
def test_nul_and_huge_numbers_in_urls_get_client_errors_not_tracebacks(serve, debug):
    deployed = {"DJANGO_SECRET_KEY": PROD_KEY, "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    extra = deployed if debug == "false" else {}
    server = serve(f"urls-{debug}", DJANGO_DEBUG=debug, DJANGO_SECURE_SSL_REDIRECT="false", **extra)

    with httpx.Client(base_url=server.url, headers={"Host": "127.0.0.1"}) as client:
        answers = {path: client.get(path) for path in ATTACKS}
        after = client.get("/api/articles")

    for path, response in answers.items():
        assert 400 <= response.status_code < 500, (path, response.status_code)
        assert "Traceback" not in response.text and "settings" not in response.text.lower()
    assert answers["/api/articles/%00"].json()["code"] == "bad_request"
    assert after.status_code == 200
