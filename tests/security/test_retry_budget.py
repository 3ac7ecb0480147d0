"""A model call asked again after the endpoint went quiet is paid for twice, and counted twice.

The adapter retries a call whose endpoint sent nothing for AGENT_MODEL_TIMEOUT (a model that
thinks without streaming its thoughts, as OpenAI's reasoning models do, an overloaded local
server). The endpoint had the whole prompt by then, and had been working on it: each attempt
it abandoned was billed. The turn was charged one call: a question that kept the model
thinking past the timeout cost three prompts and was counted as one, and with the usage the
last attempt reported the first two counted for nothing at all.

So is a call whose connection dropped once the request was sent (an endpoint that crashed or
restarted on it, a proxy's cut): the adapter asked again, for free, as often as it retries.
"""

import json

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from agent.tokens import tokens_estimate
from testing_support.model_server import ScriptedResponse, text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

REPORTED = (1000, 5)  # what the attempt that answered reported


def prompt_tokens(request: dict) -> int:
    """The loop's estimate of one attempt's prompt, from what the endpoint received."""
    messages = json.dumps(request["messages"], ensure_ascii=False)
    tools = json.dumps(request.get("tools") or [], ensure_ascii=False)
    return tokens_estimate(messages) + tokens_estimate(tools)


async def charged(serve, scripted, name: str, **env: str) -> tuple[list[dict], int]:
    server = serve(
        name,
        **model_env(scripted),
        AGENT_MODEL_TIMEOUT="0.5",
        AGENT_MODEL_MAX_RETRIES="2",
        **env,
    )
    socket = await ws_open(server)
    events = await ws_ask(socket, "Think very carefully: why cap the agent's steps?")
    await socket.close()
    server.stop()  # the save has landed
    saved = await database_sync_to_async(list)(Turn.objects.all())
    return events, sum(turn.input_tokens + turn.output_tokens for turn in saved)


def silent() -> ScriptedResponse:
    """The endpoint thinks, and says nothing until the adapter's timeout."""
    return text_response(["never"], hang_after=0)


def hung_up() -> ScriptedResponse:
    """The endpoint reads the whole request, then drops the connection without a word."""
    return ScriptedResponse(hang_up=True)


ABANDONED = pytest.mark.parametrize("abandoned_by", [silent, hung_up], ids=["timeout", "dropped"])


@ABANDONED
async def test_each_abandoned_attempt_is_charged_its_prompt(serve, scripted, abandoned_by):
    scripted.enqueue(abandoned_by(), abandoned_by())
    scripted.enqueue(text_response(["Steps are capped."], usage=REPORTED))

    events, spent = await charged(serve, scripted, f"retry-charged-{abandoned_by.__name__}")

    assert events[-1]["type"] == "done", events[-1]
    assert len(scripted.requests) == 3  # two abandoned attempts, then the answer
    abandoned = sum(prompt_tokens(request) for request in scripted.requests[:2])
    # Before: 1,005, the answering attempt's report alone.
    assert spent >= sum(REPORTED) + abandoned


@ABANDONED
async def test_retries_stop_where_the_budget_ends(serve, scripted, abandoned_by):
    scripted.enqueue(abandoned_by(), abandoned_by(), abandoned_by())
    events, spent = await charged(
        serve,
        scripted,
        f"retry-budget-{abandoned_by.__name__}",
        AGENT_TOKENS_PER_IP_PER_DAY="3500",
        AGENT_TOKENS_PER_ANSWER="200",
    )
    prompt = prompt_tokens(scripted.requests[0])
    # Room for two attempts, not three. The prompt (instructions and tool descriptions) was
    # 1,400 tokens and is 1,420 since the tools describe `read_as` and the catalogue: 3,000
    # left room for one. 3,500 holds for any prompt from 1,101 to 1,650 tokens.
    assert 2 * prompt + 200 <= 3500 < 3 * prompt + 200

    # Before: three attempts sent, the turn charged one prompt and ended model_error.
    assert events[-1]["code"] == "rate_limited", events[-1]
    assert len(scripted.requests) == 2
    # Two prompts, and the answer's share held for the call cut unanswered (it may have been
    # thinking unseen), all within the budget.
    assert 2 * prompt + 200 <= spent <= 3500


@ABANDONED
async def test_an_attempt_abandoned_unanswered_is_charged_as_a_stopped_call(
    serve, scripted, abandoned_by
):
    """A question that keeps a reasoning model thinking, unseen, past AGENT_MODEL_TIMEOUT:
    the adapter asks three times, and the endpoint bills each attempt its thinking. Each was
    charged its prompt alone, and the last nothing at all (taken for a refusal), where a call
    the visitor stops at its first word is charged the model's output cap."""
    cap = 2500
    scripted.enqueue(abandoned_by(), abandoned_by(), abandoned_by())

    events, _ = await charged(
        serve,
        scripted,
        f"retry-cut-{abandoned_by.__name__}",
        AGENT_MAX_COMPLETION_TOKENS=str(cap),
        AGENT_TOKENS_PER_IP_PER_DAY="100000",
    )

    assert events[-1]["type"] == "error", events[-1]
    assert len(scripted.requests) == 3
    saved = await database_sync_to_async(Turn.objects.get)()
    prompts = sum(prompt_tokens(request) for request in scripted.requests)
    # Before: 2,840 in and 0 out (two prompts of 1,420; the third attempt unbilled), where the
    # endpoint billed 3 x (1,420 + up to 2,500) = 11,760.
    assert (saved.input_tokens, saved.output_tokens) == (prompts, 3 * cap)
