"""A JSON write to the API's docs or schema is refused in JSON, as every other API error is.

The API's routes take no CSRF token (a write is JSON from an allowed origin), but the docs and
schema views are Django's own and are CSRF-checked: `POST /api/docs` with the site's Origin and
a JSON body (and PUT, PATCH, DELETE, any other method, and the API root) answered Django's HTML
"CSRF verification failed" page, where a client parsing the API's errors read markup. Sent to
a live daphne, as run and as deployed; the admin keeps its HTML page.
"""

import httpx
import pytest

from tests.security.test_api_errors_json import MODES, assert_json

pytestmark = pytest.mark.django_db(transaction=True)

PATHS = ["/api/docs", "/api/openapi.json", "/api/"]
METHODS = ["POST", "PUT", "PATCH", "DELETE", "PROPFIND"]


@pytest.mark.parametrize("mode", MODES)
def test_json_writes_to_the_docs_and_schema_are_refused_in_json(serve, mode):
    server = serve(f"api-csrf-{mode}", **MODES[mode])
    headers = {"Origin": server.url, "Content-Type": "application/json"}
    with httpx.Client(base_url=server.url, headers=headers) as client:
        answers = {
            (method, path): client.request(method, path, content=b"{}")
            for method in METHODS
            for path in PATHS
        }
        admin = client.post("/admin/login/", content=b"{}")

    for answer in answers.values():  # before: 403 text/html, Django's CSRF page
        assert_json(answer, 403, {"detail": "Forbidden."})
    assert admin.status_code == 403 and admin.headers["content-type"].startswith("text/html")
