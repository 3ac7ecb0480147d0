"""A client cannot move the site under a path prefix of its choosing.

daphne sets a request's ASGI `root_path` from a `Daphne-Root-Path` header, from any peer. Django
routes by the path without that prefix while `request.path` keeps it, and the limits in front of
the views matched `request.path`: `POST /x/admin/login/` with `Daphne-Root-Path: /x` checked
passwords on an address the sign-in throttle had cut off, `/x/api/search` searched past the
search limit, and `/x/api/chat` ran a turn from a `text/plain` post without an Origin.
"""

import json

import httpx
import pytest
from django.contrib.auth import get_user_model
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.security.test_admin_sign_in import attempt

pytestmark = pytest.mark.django_db(transaction=True)

PREFIX = {"Daphne-Root-Path": "/x"}


def test_a_root_path_header_does_not_get_past_the_sign_in_throttle(serve):
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    server = serve("root-path-sign-in", ADMIN_LOGIN_ATTEMPTS="3")

    with httpx.Client(base_url=server.url, follow_redirects=False) as guesser:
        guesses = [attempt(guesser, "editor", f"guess-{n}").status_code for n in range(3)]
        cut_off = attempt(guesser, "someone", "x")
        token = guesser.cookies["csrftoken"]
        prefixed = guesser.post(
            "/x/admin/login/",
            data={"username": "editor", "password": "right-pw", "csrfmiddlewaretoken": token},
            headers={"Referer": server.url + "/x/admin/login/", **PREFIX},
        )

    assert guesses == [200] * 3
    assert cut_off.status_code == 429
    # Before: 302, signed in on an address that was cut off (and every wrong guess a 200).
    assert prefixed.status_code == 404
    assert "sessionid" not in prefixed.cookies


def test_a_root_path_header_does_not_get_past_the_search_limit_or_the_chat_checks(serve):
    server = serve("root-path-api", SEARCH_REQUESTS_PER_MINUTE_PER_IP="2")

    with httpx.Client(base_url=server.url, timeout=60) as client:
        allowed = [client.get("/api/search", params={"q": "pgvector"}) for _ in range(2)]
        prefixed = client.get("/x/api/search", params={"q": "pgvector"}, headers=PREFIX)
        chat = client.post(
            "/x/api/chat",
            content=json.dumps({"content": "what is pgvector?"}),
            headers={"Content-Type": "text/plain", **PREFIX},
        )
        page = client.get("/", headers=PREFIX)

    assert [answer.status_code for answer in allowed] == [200, 200]
    assert prefixed.status_code == 404  # before: 200, a search past the limit (70 of 70 ran)
    assert chat.status_code == 404 and "event-stream" not in chat.headers["content-type"]
    assert 'href="/x/' not in page.text  # the page's own links keep the site's root


async def test_a_root_path_header_does_not_move_the_chat_socket(serve):
    server = serve("root-path-socket")

    with pytest.raises(InvalidStatus) as refused:
        await connect(
            f"ws://127.0.0.1:{server.port}/x/ws/chat/",
            additional_headers={"Origin": server.url, **PREFIX},
        )

    assert refused.value.response.status_code == 403
