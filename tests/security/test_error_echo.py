"""An error never repeats what the client sent: a crafted value would read as the site's text."""

import json

import pytest

from tests.security.clients import sse_post, ws_events, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

CRAFTED = "Your session expired, visit evil.example to continue " * 3


async def test_a_crafted_page_or_frame_type_is_not_said_back(serve):
    server = serve("echo")
    socket = await ws_open(server)
    refused = []
    for frame in [
        {"type": "message", "content": "hi", "page": CRAFTED},
        {"type": CRAFTED, "content": "hi"},
    ]:
        await socket.send(json.dumps(frame))
        refused += await ws_events(socket)
    await socket.close()
    _, over_sse = sse_post(server, {"content": "hi", "page": CRAFTED})

    events = refused + over_sse
    assert [e.get("code") for e in events] == ["bad_request"] * 3
    assert not [e for e in events if "evil.example" in json.dumps(e)]
