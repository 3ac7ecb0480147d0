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


async def test_a_crafted_field_name_is_not_said_back(serve):
    # A key is the sender's text too: a NUL in its value (or a lone surrogate in the key itself)
    # was refused as "The text in '<the key>' contains…", over the WebSocket and the API alike.
    server = serve("keys")
    crafted = [
        {"type": "message", "content": "hi", CRAFTED: "a\u0000b"},
        {"type": "message", "content": "hi", CRAFTED + "\ud800": 1},
        {"type": "message", "content": "hi", CRAFTED: {"nested": ["\u0000"]}},
    ]
    socket = await ws_open(server)
    refused = []
    for frame in crafted:
        await socket.send(json.dumps(frame))
        refused += await ws_events(socket)
    # A protocol field is still named: the visitor learns which one to fix.
    await socket.send(json.dumps({"type": "message", "content": "a\u0000b"}))
    named = await ws_events(socket)
    await socket.close()
    over_api = [sse_post(server, frame)[0] for frame in crafted]

    assert [e.get("code") for e in refused] == ["bad_request"] * 3
    assert [r.status_code for r in over_api] == [400] * 3
    said = [json.dumps(e) for e in refused] + [r.text for r in over_api]
    assert not [text for text in said if "evil.example" in text]
    assert "'content'" in named[0]["message"]
