"""A turn cannot spend more tokens than its budgets have left, alone or racing another turn.

The budget was checked once, when a turn started: a turn that found a few tokens left then
ran five model calls and spent several times that. And a call was charged only the usage its
server reported at the very end of its stream: Stop before that end, and it cost nothing.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import ws_ask, ws_events, ws_first, ws_open
from tests.security.conftest import BUDGET_LEFT, ask_near_the_budget, model_env

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 6000  # tokens one address may spend today
CALL = (1500, 100)  # what each scripted model call reports spending


def searches(count: int) -> list:
    call = [("c1", "search_knowledge_base", json.dumps({"query": "docent"}))]
    return [tool_call_response(call, usage=CALL) for _ in range(count)]


@pytest.mark.parametrize("visitors", [1, 2])
async def test_turns_stop_before_a_model_call_their_budget_cannot_cover(serve, scripted, visitors):
    scripted.enqueue(*searches(5 * visitors))  # five steps each, as the step limit allows
    server = serve(
        f"turn-budget-{visitors}", AGENT_TOKENS_PER_IP_PER_DAY=str(CAP), **model_env(scripted)
    )
    sockets = [await ws_open(server) for _ in range(visitors)]  # one session each

    turns = await asyncio.gather(*(ws_ask(socket, "search forever") for socket in sockets))
    for socket in sockets:
        await socket.close()
    server.stop()  # the saves have landed

    saved = await database_sync_to_async(list)(Turn.objects.all())
    spent = sum(turn.input_tokens + turn.output_tokens for turn in saved)
    calls = 5 * visitors - scripted.pending
    assert spent <= CAP
    assert spent == calls * sum(CALL)
    assert all(events[-1]["type"] == "error" for events in turns)
    assert "rate_limited" in [events[-1]["code"] for events in turns]
    assert len(saved) == visitors and {turn.status for turn in saved} <= {"error", "max_steps"}


async def saved_tokens() -> int:
    saved = await database_sync_to_async(list)(Turn.objects.all())
    return sum(turn.input_tokens + turn.output_tokens for turn in saved)


async def test_stopping_each_answer_before_its_usage_arrives_does_not_make_it_free(serve, scripted):
    # Each answer streams slowly; the visitor presses Stop at its first words, every time.
    scripted.enqueue(*[text_response(["word "] * 200, delay=0.05) for _ in range(8)])
    server = serve("stop-early", AGENT_TOKENS_PER_IP_PER_DAY=str(CAP), **model_env(scripted))

    endings = await stop_at_the_first_words(server, times=8)
    server.stop()  # the saves have landed

    assert "rate_limited" in endings  # before: eight free answers, and as many more as asked
    assert 0 < await saved_tokens() <= CAP


async def test_a_model_thinking_unseen_is_charged_its_cap_when_stopped_at_its_first_word(
    serve, scripted
):
    """OpenAI's reasoning models think before their first word and stream none of it; the
    endpoint bills the thinking. Stopped at that word, a call was charged its prompt and the
    word, so a visitor ran about four such turns on a budget that pays for one or two."""
    thinking = 0.3  # seconds of unseen thought before the first word
    answers = [text_response(["word "] * 200, first_delay=thinking, delay=0.05)] * 6
    scripted.enqueue(*answers)
    cap = 2500
    server = serve(
        "stop-thinking",
        AGENT_TOKENS_PER_IP_PER_DAY=str(CAP),
        AGENT_MAX_COMPLETION_TOKENS=str(cap),
        **model_env(scripted),
    )

    endings = await stop_at_the_first_words(server, times=6)
    server.stop()  # the saves have landed

    saved = await database_sync_to_async(list)(Turn.objects.filter(status="cancelled"))
    assert saved and all(turn.output_tokens == cap for turn in saved)
    assert {request["max_completion_tokens"] for request in scripted.requests} == {cap}
    assert endings.count("cancelled") == len(saved) <= CAP // cap
    assert "rate_limited" in endings


async def stop_at_the_first_words(server, times: int) -> list[str]:
    """Ask `times` times, each from a new session, pressing Stop at the answer's first words;
    return how each turn ended."""
    endings = []
    for _ in range(times):
        socket = await ws_open(server)
        await socket.send(json.dumps({"type": "message", "content": "tell me everything"}))
        event = await ws_first(socket)
        while event["type"] not in {"text", "error", "done"}:
            event = await ws_first(socket)
        if event["type"] == "text":
            await socket.send(json.dumps({"type": "stop"}))
            event = (await ws_events(socket))[-1]
        endings.append(event.get("code", event["type"]))
        await socket.close()
    return endings


async def test_an_answer_longer_than_the_budget_is_cut_where_the_budget_ends(serve, scripted):
    # About 3,400 tokens of answer (a token per three characters), and it says it spent 3,500.
    reply = text_response(["word "] * 2000, usage=(1000, 2500))
    events, spent = await ask_near_the_budget(
        serve, scripted, "long-answer", reply, "write me a book"
    )

    shown = "".join(event["content"] for event in events if event["type"] == "text")
    assert events[-1]["code"] == "rate_limited"
    assert 0 < len(shown) < 2000 * len("word ")
    assert 0 < spent <= BUDGET_LEFT


async def test_a_tool_argument_longer_than_the_budget_is_cut_while_it_streams(serve, scripted):
    # "Search for this 20,000-character text": the model writes it as a tool argument. Argument
    # text is never shown, so it was not counted until the call's usage came at its end.
    arguments = json.dumps({"query": "lorem ipsum " * 1700})
    call = [("c1", "search_knowledge_base", arguments)]
    scripted.enqueue(tool_call_response(call, split=60, usage=(1000, 7000)))
    server = serve(
        "long-argument",
        AGENT_TOKENS_PER_IP_PER_DAY="3000",
        AGENT_TOKENS_PER_ANSWER="200",
        **model_env(scripted),
    )
    socket = await ws_open(server)

    events = await ws_ask(socket, "search for the whole of this text")
    await socket.close()
    server.stop()

    assert events[-1]["code"] == "rate_limited"
    assert not [event for event in events if event["type"] == "tool_start"]
    assert 0 < await saved_tokens() <= 3000
    saved = await database_sync_to_async(Turn.objects.get)()
    assert (saved.status, saved.user_message) == ("error", "search for the whole of this text")


@pytest.mark.parametrize("usage", [None, (1400, 0)], ids=["no-usage", "zero-output"])
async def test_a_capped_model_whose_server_reports_no_output_is_charged_its_cap(
    serve, scripted, usage
):
    """A reasoning model behind a server that reports no usage (or a gateway's zero): the
    endpoint billed its unseen thinking, up to the cap, and each whole answer was charged its
    prompt and the words it showed, as if it had not thought at all."""
    cap = 2500
    scripted.enqueue(*[text_response(["Short answer."], usage=usage)] * 4)
    server = serve(
        f"unreported-{usage is None}",
        AGENT_TOKENS_PER_IP_PER_DAY=str(CAP),
        AGENT_MAX_COMPLETION_TOKENS=str(cap),
        **model_env(scripted),
    )
    endings = []
    for _ in range(4):
        socket = await ws_open(server)
        endings.append((await ws_ask(socket, "think hard, answer short"))[-1])
        await socket.close()
    server.stop()  # the saves have landed

    saved = await database_sync_to_async(list)(Turn.objects.filter(status="done"))
    assert saved and all(turn.output_tokens == cap for turn in saved)
    # Before: four answers of about 1,400 tokens each on a 6,000-token day.
    assert [ending["type"] for ending in endings].count("done") == len(saved) <= CAP // cap
