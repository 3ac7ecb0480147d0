"""A reply of many tool calls is counted against the budget as it streams, names and all.

Only the calls' arguments were counted while they arrived: 1,500 calls with empty arguments
("list the articles for each of these tags") counted as about 1,000 tokens, so the call was
never cut, and the turn was billed the 30,000 its endpoint reported, ten times the 3,000 the
address had left.
"""

import pytest

from testing_support.model_server import ScriptedResponse, raw_response
from tests.security.conftest import BUDGET_LEFT, ask_near_the_budget

pytestmark = pytest.mark.django_db(transaction=True)

CALLS = 1500


def many_calls() -> ScriptedResponse:
    calls = [
        {
            "tool_calls": [
                {
                    "index": n,
                    "id": f"call_{n:08d}",
                    "type": "function",
                    "function": {"name": "list_articles", "arguments": "{}"},
                }
            ]
        }
        for n in range(CALLS)
    ]
    usage = {"prompt_tokens": 1000, "completion_tokens": 30000}
    return raw_response(calls, usage=usage, finish="tool_calls")


async def test_a_reply_of_many_calls_is_cut_where_the_budget_ends(serve, scripted):
    events, spent = await ask_near_the_budget(
        serve,
        scripted,
        "many-calls",
        many_calls(),
        "list the articles for each of these 1,500 tags",
    )

    assert events[-1]["code"] == "rate_limited"
    assert not [event for event in events if event["type"] == "tool_start"]
    assert 0 < spent <= BUDGET_LEFT


BARE_CALLS = 5000


def bare_calls() -> ScriptedResponse:
    """Fragments that open a call and carry nothing else: no id, no name, no arguments."""
    calls = [{"tool_calls": [{"index": n}]} for n in range(BARE_CALLS)]
    usage = {"prompt_tokens": 1000, "completion_tokens": 50000}
    return raw_response(calls, usage=usage, finish="tool_calls")


async def test_calls_with_nothing_in_them_still_count_their_framing(serve, scripted):
    # Counted by their text alone they were free: 5,000 calls shown (a `tool_start` each),
    # 5,000 rows saved, and the turn charged the 51,000 tokens its endpoint reported.
    events, spent = await ask_near_the_budget(
        serve, scripted, "bare-calls", bare_calls(), "call a tool for each of these"
    )

    assert events[-1]["code"] == "rate_limited"
    assert not [event for event in events if event["type"] == "tool_start"]
    assert 0 < spent <= BUDGET_LEFT
