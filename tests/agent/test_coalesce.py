"""Text deltas coalesced into frames (agent/coalesce.py), alone and behind the real transports."""

import asyncio

import pytest

from agent import events
from agent.coalesce import TextFrames
from testing_support.model_server import text_response
from tests.agent.chat_helpers import ask, connect, saved_turns, shape, text_of, wait_until


class Sink:
    def __init__(self) -> None:
        self.events: list[dict] = []

    async def __call__(self, event: dict) -> None:
        self.events.append(event)

    def texts(self) -> list[str]:
        return [e["content"] for e in self.events if e["type"] == "text"]


async def test_the_first_delta_goes_out_at_once_and_later_ones_wait_for_the_interval():
    sink = Sink()
    frames = TextFrames(sink, interval=60)  # no timer fires during this test

    await frames(events.text("Hel"))
    await frames(events.text("lo "))
    await frames(events.text("there"))

    assert sink.texts() == ["Hel"]
    await frames.flush()
    assert sink.texts() == ["Hel", "lo there"]


async def test_the_timer_sends_waiting_text_without_another_event():
    sink = Sink()
    frames = TextFrames(sink, interval=0.02)

    await frames(events.text("a"))
    await frames(events.text("b"))
    await frames(events.text("c"))
    assert sink.texts() == ["a"]  # b and c wait for the timer

    assert await wait_until(lambda: len(sink.events) == 2, timeout=5)
    assert sink.texts() == ["a", "bc"]


async def test_a_quiet_interval_lets_the_next_delta_go_out_at_once():
    sink = Sink()
    frames = TextFrames(sink, interval=0.01)
    await frames(events.text("a"))
    await asyncio.sleep(0.05)  # longer than the interval: the next delta is not held

    await frames(events.text("b"))

    assert sink.texts() == ["a", "b"]


async def test_text_waiting_is_sent_before_every_other_event():
    others = [
        events.tool_start("c1", "search_knowledge_base", {"query": "x"}),
        events.tool_end("c1", "search_knowledge_base", True, 1.0, "1 result"),
        events.citation(7, "Title", "/articles/t/"),
        events.done("conv", 1, {}),
    ]
    for other in [*others, events.error(events.MODEL_ERROR, "failed")]:
        sink = Sink()
        frames = TextFrames(sink, interval=60)
        await frames(events.text("first "))
        await frames(events.text("waiting"))

        await frames(other)

        assert [e["type"] for e in sink.events] == ["text", "text", other["type"]]
        assert sink.texts() == ["first ", "waiting"]


async def test_the_size_cap_sends_a_frame_before_the_interval():
    sink = Sink()
    frames = TextFrames(sink, interval=60, max_chars=10)
    await frames(events.text("x"))  # the leading frame

    for _ in range(4):
        await frames(events.text("abc"))  # 12 characters: over the cap on the fourth

    assert sink.texts() == ["x", "abcabcabcabc"]


async def test_nothing_follows_the_terminal_event_and_close_drops_waiting_text():
    sink = Sink()
    frames = TextFrames(sink, interval=0.01)
    await frames(events.done("conv", 1, {}))
    await frames(events.text("late"))
    assert [e["type"] for e in sink.events] == ["done"]

    sink = Sink()
    frames = TextFrames(sink, interval=0.01)
    await frames(events.text("shown"))
    await frames(events.text("dropped"))
    frames.close()
    await asyncio.sleep(0.05)  # past the timer: it was cancelled with the text
    assert sink.texts() == ["shown"]


async def test_interval_zero_sends_every_delta_as_its_own_frame():
    sink = Sink()
    frames = TextFrames(sink, interval=0)
    for piece in ("a", "b", "c"):
        await frames(events.text(piece))
    assert sink.texts() == ["a", "b", "c"]


async def test_a_frame_the_timer_is_sending_stays_ahead_of_the_next_event():
    sent: list[str] = []
    release = asyncio.Event()

    async def slow_transport(event: dict) -> None:
        if event["type"] == "text" and event["content"] == "bc":
            await release.wait()  # the timer's frame is stuck in a slow write
        sent.append(event.get("content") or event["type"])

    frames = TextFrames(slow_transport, interval=0.01)
    await frames(events.text("a"))
    await frames(events.text("b"))
    await frames(events.text("c"))
    assert await wait_until(lambda: frames._flusher is not None, timeout=5)

    ending = asyncio.create_task(frames(events.done("conv", 1, {})))
    await asyncio.sleep(0.02)
    assert sent == ["a"]  # `done` waits behind the frame being written
    release.set()
    await ending
    assert sent == ["a", "bc", "done"]


# --- behind the transports ---------------------------------------------------------------

pytestmark_db = pytest.mark.django_db(transaction=True)


async def test_the_models_socket_rests_for_one_frame_interval_and_never_long(scripted, settings):
    from agent.runner import TurnRunner

    runner = TurnRunner()
    for frame_ms, pause in ((50, 0.05), (60_000, 0.1), (0, 0.0)):
        settings.AGENT_TEXT_FRAME_MS = frame_ms
        model = runner.model()
        assert model.read_pause == pause
        await model.aclose()


@pytestmark_db
async def test_a_websocket_answer_arrives_in_fewer_frames_with_the_same_text(scripted, settings):
    settings.AGENT_TEXT_FRAME_MS = 50
    pieces = ["tok "] * 40
    scripted.enqueue(text_response(pieces, delay=0.005))  # 200 deltas a second
    socket = await connect()

    received = await ask(socket, "Count")

    assert shape(received) == ["start", "text", "done"]
    assert text_of(received) == "tok " * 40
    assert len([e for e in received if e["type"] == "text"]) < len(pieces)
    await socket.disconnect()


@pytestmark_db
async def test_stop_sends_the_waiting_text_before_cancelled_and_saves_the_same(scripted, settings):
    settings.AGENT_TEXT_FRAME_MS = 60_000  # after the first frame, text only waits
    scripted.enqueue(text_response(["word "] * 200, delay=0.02))
    socket = await connect()
    await socket.send_json_to({"type": "message", "content": "Talk"})
    received = [await socket.receive_json_from(timeout=10) for _ in range(2)]  # start, text
    # Enough words that the turn has read some after its first frame: the model's socket
    # rests for up to runner.READ_PAUSE_MAX (0.1 s) between reads.
    assert await wait_until(lambda: len(scripted.streams["Talk"].writes) >= 15, timeout=10)

    await socket.send_json_to({"type": "stop"})
    while received[-1]["type"] not in ("done", "error"):
        received.append(await socket.receive_json_from(timeout=10))

    assert shape(received) == ["start", "text", "error"]
    assert received[-1]["code"] == "cancelled"
    assert len([e for e in received if e["type"] == "text"]) == 2  # the leading and the rest
    [turn] = await saved_turns()
    assert turn.status == "cancelled" and turn.answer == text_of(received)
    await socket.disconnect()


@pytestmark_db
async def test_sse_coalesces_too(scripted, settings):
    from django.test import AsyncClient

    from tests.agent.test_api_chat import post_chat

    settings.AGENT_TEXT_FRAME_MS = 60_000
    scripted.enqueue(text_response(["a", "b", "c", "d"], delay=0.01))

    received = await post_chat(AsyncClient(), content="Letters")

    assert [e["type"] for e in received] == ["start", "text", "text", "done"]
    assert text_of(received) == "abcd"
    await saved_turns()
