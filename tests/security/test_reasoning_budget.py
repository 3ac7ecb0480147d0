"""A reasoning model's thinking is spent tokens too, though the visitor never sees it.

Servers stream it beside the answer (`reasoning_content`: DeepSeek, vLLM, LiteLLM;
`reasoning`: Ollama, OpenRouter, newer vLLM). Only `content` and tool arguments were counted
against the budget while they streamed, so "think it through very carefully" ran past every
budget: one turn with 3,000 tokens left spent 8,000, and the address's and the site's daily
caps were overshot by as much on every turn an address started.
"""

import pytest

from testing_support.model_server import raw_response
from tests.security.conftest import BUDGET_LEFT, ask_near_the_budget

pytestmark = pytest.mark.django_db(transaction=True)

USAGE = {"prompt_tokens": 1000, "completion_tokens": 7000}  # what all that thinking cost


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_thinking_longer_than_the_budget_is_cut_while_it_streams(serve, scripted, field):
    thinking = [{field: "Let me think about this step by step. "} for _ in range(600)]
    reply = raw_response([*thinking, {"content": "The answer."}], usage=USAGE)
    events, spent = await ask_near_the_budget(
        serve, scripted, f"reasoning-{field}", reply, "think it through very carefully"
    )

    assert events[-1]["code"] == "rate_limited"
    assert not [event for event in events if event["type"] == "text"]  # thinking is not shown
    assert 0 < spent <= BUDGET_LEFT
