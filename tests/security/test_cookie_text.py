"""A session cookie whose text PostgreSQL cannot hold is no session, never a server error.

A quoted cookie value may carry octal escapes, which Django's cookie parser decodes:
`sessionid="aaaaaaaaaa\\000bbb"` is a key with a NUL in it. The session store sent it to the
database as it came, and PostgreSQL refused it: the chat (both transports), the transcript API
and the admin all answered 500, with a traceback at ERROR for every request.
"""

import httpx
import pytest

from tests.security.clients import sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

COOKIES = [
    r'sessionid="aaaaaaaaaa\000bbb"',  # NUL
    r'sessionid="aaaaaaaaaa\355\240\200"',  # the UTF-8 bytes of a lone surrogate
    "sessionid=" + "a" * 5000,  # far longer than any key
]
NO_SUCH_CONVERSATION = "/api/conversations/00000000-0000-0000-0000-000000000000"


@pytest.mark.parametrize("cookie", COOKIES)
async def test_a_session_cookie_with_text_the_database_refuses_is_no_session(serve, cookie):
    server = serve("cookie-text")
    header = {"Cookie": cookie}

    async with httpx.AsyncClient(base_url=server.url, headers=header) as client:
        admin = await client.get("/admin/")
        transcript = await client.get(NO_SUCH_CONVERSATION)
    response, streamed = sse_post(server, {"type": "message", "content": "hello"}, headers=header)
    socket = await ws_open(server, headers=header)
    answered = await ws_ask(socket, "hello")
    await socket.close()

    assert admin.status_code == 302 and "/admin/login/" in admin.headers["location"]
    assert transcript.status_code == 404
    assert response.status_code == 200 and streamed[-1]["type"] == "done"
    assert answered[-1]["type"] == "done"
