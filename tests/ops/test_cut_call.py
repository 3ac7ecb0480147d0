"""A model call cut before its usage came is charged an estimate; the turn's line and the
call's span say which part of the charge was estimated and what the call had streamed.

The record gave the estimate as if the endpoint had reported it: a stream cut after three
words read `tokens 1436 in 1000 out`, nothing saying 997 of those were the cut-call rule's.
"""

import json

import pytest

from testing_support.model_server import text_response
from tests.agent.chat_helpers import ask, connect, saved_turns
from tests.ops.test_instruments import json_lines, sample
from tests.ops.test_tracing import _named, exported  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_cut_call_says_what_was_estimated_and_what_it_streamed(
    scripted,
    exported,  # noqa: F811
    settings,
):
    settings.AGENT_MODEL_MAX_RETRIES = 0
    scripted.enqueue(text_response(["One ", "two ", "three ", "four"], drop_after=3))
    estimated = sample("docent_model_tokens_estimated_total", direction="output")
    socket = await connect()
    with json_lines("ops.observer") as lines:
        events = await ask(socket, "Cut me off")
    await socket.disconnect()
    (turn,) = await saved_turns()

    assert events[-1]["code"] == "model_error"
    [line] = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert line["estimated_input_tokens"] == line["input_tokens"] > 0  # no report came
    assert line["estimated_output_tokens"] == line["output_tokens"] == turn.output_tokens
    assert 0 < line["written_output_tokens"] < line["estimated_output_tokens"]
    assert "(estimated, no usage reported: " in line["message"]
    counted = sample("docent_model_tokens_estimated_total", direction="output") - estimated
    assert counted == line["estimated_output_tokens"]
    # The turn's record keeps the split too: the admin said "1,426 in · 1,000 out" alone.
    assert turn.estimated_tokens == line["estimated_input_tokens"] + line["estimated_output_tokens"]
    (chat,) = _named(exported.get_finished_spans(), "chat scripted-model")
    assert chat.attributes["docent.usage.written_output_tokens"] == line["written_output_tokens"]
    assert (
        chat.attributes["docent.usage.estimated_output_tokens"] == line["estimated_output_tokens"]
    )


async def test_a_reported_call_has_nothing_estimated(scripted):
    scripted.enqueue(text_response(["Whole."], usage=(900, 80)))
    estimated = sample("docent_model_tokens_estimated_total", direction="input")
    socket = await connect()
    with json_lines("ops.observer") as lines:
        await ask(socket, "All of it")
    await socket.disconnect()
    (turn,) = await saved_turns()

    [line] = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert line["estimated_input_tokens"] == line["estimated_output_tokens"] == 0
    assert turn.estimated_tokens == 0
    assert "estimated" not in line["message"]
    assert sample("docent_model_tokens_estimated_total", direction="input") == estimated


def test_the_transcript_says_how_many_tokens_were_estimated(staff_client):
    from tests.agent.admin.factories import make_conversation, make_turn

    conversation = make_conversation()
    make_turn(conversation, input_tokens=1426, output_tokens=1000, estimated_tokens=2426)
    make_turn(conversation, input_tokens=900, output_tokens=80)

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")

    assert page.content.decode().count('class="dc-muted dc-tokens-estimated"') == 1
    assert "(2,426 estimated)" in page.content.decode()
