"""TRACE, TRACK and CONNECT are refused before any view, on pages, the API and the probes.

`TRACE /` answered 200 with the home page (Django's CSRF check counts TRACE safe, and function
views take any method), as did `/healthz` and `/readyz`: nothing was echoed, but a method meant
to reflect the request was answered as a GET.
"""

import http.client

import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

PATHS = ["/", "/articles/", "/api/search?q=agents", "/healthz", "/readyz", "/admin/login/"]


def request(port: int, method: str, path: str) -> tuple[int, str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers={"Host": "127.0.0.1"})
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, response.getheader("Allow") or "", body
    finally:
        connection.close()


@pytest.mark.parametrize("method", ["TRACE", "TRACK"])
def test_a_method_that_echoes_the_request_gets_405_everywhere(serve, method):
    deployed = {"DJANGO_SECRET_KEY": PROD_KEY, "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    server = serve(
        f"methods-{method}", DJANGO_DEBUG="false", DJANGO_SECURE_SSL_REDIRECT="false", **deployed
    )

    answers = {path: request(server.port, method, path) for path in PATHS}
    page = request(server.port, "GET", "/")

    for path, (status, allow, body) in answers.items():
        assert status == 405, (path, status)
        assert "GET" in allow and "TRACE" not in allow
        assert "<html" not in body.lower()
    assert page[0] == 200


STYLESHEET = "/static/chat.css"
WRITES = ["PUT", "DELETE", "PATCH", "POST", "PROPFIND", "FOO"]


def test_a_static_file_answers_only_get_and_head(serve):
    # `make run` serves /static/ itself: PUT, DELETE, a POST or any made-up method was 200 with
    # the file (a scanner reads "PUT accepted"), where the cluster's nginx answers 405.
    server = serve("methods-static")

    refused = {method: request(server.port, method, STYLESHEET) for method in WRITES}
    read = request(server.port, "GET", STYLESHEET)
    head = request(server.port, "HEAD", STYLESHEET)

    for method, (status, allow, body) in refused.items():
        assert status == 405, (method, status)
        assert allow == "GET, HEAD", (method, allow)
        assert ".chat-" not in body, method  # not the stylesheet
    assert read[0] == 200 and ".chat-" in read[2]
    assert head[0] == 200 and head[2] == ""
