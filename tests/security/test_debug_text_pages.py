"""The plain-text debug page never reaches a client that is not `make run`'s own user.

Django draws its 500 page (and the 400 of a SuspiciousOperation, with DEBUG on) as plain text
for a client that prefers `Accept: text/plain`, and that text lacks the `<code>` of the HTML
sentence the guard looked for. An error raised in a middleware is drawn by Django there, not
by the guard's `process_exception`: a form post with more fields than Django parses, read by
the CSRF check, answered a visitor behind a tunnel with the traceback, the settings and the
paths (18 kB). The CSRF failure's page with DEBUG on (its help section) breaks that sentence
across a line, and reached any such visitor who posted without a token.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

DEBUG_TEXT = "DEBUG = True"
FIELDS = "&".join(f"field{n}=1" for n in range(1100))  # past DATA_UPLOAD_MAX_NUMBER_FIELDS
POST = {
    "Content-Type": "application/x-www-form-urlencoded",
    "Accept": "text/plain",
    # The CSRF check reads the form only once the cookie is there; any well-formed value is.
    "Cookie": "csrftoken=" + "a" * 32,
}


def test_a_remote_client_asking_for_text_gets_no_debug_page(serve):
    server = serve("debug-text", DJANGO_TRUSTED_PROXIES="1")
    remote = {"X-Forwarded-For": "203.0.113.7"}  # as nginx in front reports the visitor
    tunnel = {"Via": "1.1 tunnel"}  # as ngrok or cloudflared pass one on, from loopback

    with httpx.Client(base_url=server.url, timeout=30) as client:
        local = client.post("/", content=FIELDS, headers=POST)  # the control: the local user
        answers = [
            client.post(path, content=FIELDS, headers={**POST, **sign})
            for sign in (remote, tunnel)
            for path in ("/", "/articles/no-such-article/")
        ]
        local_csrf = client.post("/", content="a=1", headers=POST | {"Cookie": ""})
        csrf = [
            client.post("/", content="a=1", headers={**POST, "Cookie": "", **sign})
            for sign in (remote, tunnel)
        ]

    assert local.status_code == 400 and DEBUG_TEXT in local.text
    assert "TooManyFieldsSent" in local.text  # the attack reaches the error it aims at
    for answer in answers:
        assert answer.status_code == 400
        assert DEBUG_TEXT not in answer.text
        assert "TooManyFieldsSent" not in answer.text and "INSTALLED_APPS" not in answer.text
        assert len(answer.content) < 2000
    assert local_csrf.status_code == 403 and "DEBUG =" in local_csrf.text  # its help section
    for answer in csrf:
        assert answer.status_code == 403
        assert "DEBUG =" not in answer.text and "CSRF" not in answer.text
