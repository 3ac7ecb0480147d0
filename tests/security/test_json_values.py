"""A frame or body holding thousands of JSON values is refused before they are walked.

64 kB of `[[],[],…]` is 21,000 values, all under the depth cap. The depth and text checks
walked every one (a tuple each), 46 ms of the event loop per frame: ten sockets of one
address, each within its 120 frames a minute, kept the process busy for 45 s and its
/healthz waited 4 s. A chat frame has about eight values; past AGENT_MAX_JSON_VALUES the
frame is a `bad_request`, found before the walk queues the values.
"""

import json

import pytest

from tests.security.clients import sse_post, ws_ask, ws_events, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

EMPTY_LISTS = "[" + ",".join(["[]"] * 21_000) + "]"
ZEROS = "[" + ",".join(["0"] * 32_000) + "]"


def frame(values: str) -> str:
    """A question that would start a turn, with the values in a field nobody reads."""
    return '{"type":"message","content":"what is pgvector?","x":' + values + "}"


async def test_a_frame_of_thousands_of_values_is_refused_and_the_socket_stays_usable(serve):
    server = serve("json-values-ws")
    socket = await ws_open(server)

    for values in (EMPTY_LISTS, ZEROS):
        assert len(frame(values).encode()) < 65_536  # within the size cap: only the count
        await socket.send(frame(values))
        refused = await ws_events(socket)
        assert [(e["type"], e.get("code")) for e in refused] == [("error", "bad_request")]
        assert "values" in refused[0]["message"]
    answered = await ws_ask(socket, "still there?", x=list(range(100)))  # a few are fine

    assert answered[-1]["type"] == "done"
    assert "Traceback" not in server.output()
    await socket.close()


def test_a_body_of_thousands_of_values_gets_400(serve):
    server = serve("json-values-sse")

    refused, events = sse_post(server, frame(EMPTY_LISTS))

    assert (refused.status_code, refused.json()["code"]) == (400, "bad_request")
    assert "values" in refused.json()["detail"]
    assert events == []
    assert json.loads(refused.text)["detail"].startswith("The JSON holds more than")
