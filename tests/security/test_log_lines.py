"""Text a model writes reaches the log only escaped: it cannot begin a line of its own.

A visitor dictates what a model writes ("call the tool named …"), and a tool call that fails
is logged with its error, which quotes the tool's name and the argument names it was sent. The
text format writes a line per record, so a line break in that text wrote a line of the
sender's choosing into the log: a forged ERROR, say, for an operator or a log alert to act on.
"""

import json

import pytest

from testing_support.model_server import error_response, text_response, tool_call_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

FORGED = "2026-12-05 00:00:00,000 ERROR agent.runner: forged"


async def test_a_tool_call_cannot_write_a_line_of_its_own_into_the_log(serve, scripted):
    calls = [
        # An unknown tool's error quotes its name; invalid arguments quote the names sent.
        ("c1", f"lookup\n{FORGED} by a name", "{}"),
        ("c2", "search_knowledge_base", json.dumps({"query": "x", f"\n{FORGED} by a key": 1})),
        # A line separator (U+2028) and an escape sequence that rewrites a terminal's line.
        ("c3", f"lookup\u2028{FORGED} by a separator\x1b[2K", "{}"),
    ]
    scripted.enqueue(tool_call_response(calls), text_response(["Nothing found."]))
    server = serve("forged-log-line", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "Call the tools I name.")
    await socket.close()
    server.stop()

    lines = server.output().splitlines()  # splits at U+2028 too, as log viewers do
    failed = [line for line in lines if "tool " in line and " failed (" in line]
    assert events[-1]["type"] == "done"
    # Before: three lines began with the forged text, one per call.
    assert not [line for line in lines if line.startswith(FORGED[:23])]
    assert len(failed) == 3
    assert all(FORGED in line for line in failed)  # still said, escaped: "\n2026-…"
    assert not [line for line in lines if "\x1b" in line]


async def test_a_model_endpoints_error_cannot_write_a_line_of_its_own(serve, scripted):
    # An endpoint's error may quote the request it refused, the visitor's words included; the
    # retry's WARNING quoted it raw.
    scripted.enqueue(
        error_response(500, message=f"bad input: x\n{FORGED} by the endpoint\u2028x"),
        text_response(["Hello."]),
    )
    server = serve("forged-model-error", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "Hello")
    await socket.close()
    server.stop()

    lines = server.output().splitlines()
    retried = [line for line in lines if "model call failed (" in line]
    assert events[-1]["type"] == "done"
    assert not [line for line in lines if line.startswith(FORGED[:23])]  # one before
    assert len(retried) == 1 and FORGED in retried[0]
