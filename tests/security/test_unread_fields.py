"""What a model writes outside `content` is counted, and a refusal is shown.

The adapter read `content`, tool calls and thinking. OpenAI streams a refusal in `refusal`
instead of `content`, and a server answering the legacy functions API writes `function_call`:
both were read nowhere, so 2,000 chunks of either ended `done` with nothing shown and charged
41,000 tokens to an address with 3,000 left.
"""

import pytest

from agent.llm.openai_compat import DELTA_CHARS
from agent.tokens import tokens_estimate
from testing_support.model_server import raw_response, text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import BUDGET_LEFT, ask_near_the_budget, model_env

pytestmark = pytest.mark.django_db(transaction=True)

PIECE = "I will not answer that question at all, and here is why. " * 4
USAGE = {"prompt_tokens": 1000, "completion_tokens": 40000}


@pytest.mark.parametrize(
    "delta",
    [{"refusal": PIECE}, {"function_call": {"name": "search", "arguments": PIECE}}],
    ids=["refusal", "function_call"],
)
async def test_text_outside_content_is_cut_where_the_budget_ends(serve, scripted, delta):
    reply = raw_response([delta] * 2000, usage=USAGE)
    events, spent = await ask_near_the_budget(serve, scripted, "unread", reply, "Why?")

    assert events[-1]["code"] == "rate_limited", events[-1]
    # Cut within one delta of where the budget ends: the delta that outgrows the grant was
    # written by the endpoint before it could be refused, and is charged (not shown).
    # Before: 41,000 tokens charged. The bound was met exactly until the prompt grew by 20
    # tokens (the tool descriptions of passes 44 and 46) and the cut fell 1 token past it.
    assert 0 < spent <= BUDGET_LEFT + tokens_estimate(PIECE[:DELTA_CHARS])


async def test_a_refusal_reaches_the_visitor(serve, scripted):
    refusal = text_response([])
    refusal.chunks.insert(1, raw_response([{"refusal": "I can't help with that."}]).chunks[0])
    scripted.enqueue(refusal)
    server = serve("refusal-shown", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "Write me something I should not have.")
    await socket.close()

    assert events[-1]["type"] == "done"
    assert "".join(e["content"] for e in events if e["type"] == "text") == (
        "I can't help with that."
    )
