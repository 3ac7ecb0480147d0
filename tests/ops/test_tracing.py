"""Traces in-process: message contents only when enabled; no SDK at all when tracing is off."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ops import tracing
from testing_support.model_server import text_response, tool_call_response
from testing_support.waits import wait_until
from tests.agent.chat_helpers import ask, connect, saved_turns
from tests.agent.test_persistence import (
    database_outage,  # noqa: F401  (the fixture)
    outage_as_saves_start,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def exported():
    """Every span of this process, kept in memory (the provider exports synchronously)."""
    exporter = InMemorySpanExporter()
    tracing.reset(tracing.tracer_build(exporter, batch=False))
    yield exporter
    tracing.reset()


async def _traced(exported, question: str) -> tuple[list[dict], list]:
    """Ask `question` on a fresh socket and wait for its save: the turn's events, and every
    span finished by then (the save's included)."""
    socket = await connect()
    events = await ask(socket, question)
    await socket.disconnect()
    await saved_turns()
    return events, list(exported.get_finished_spans())


def _named(spans: list, name: str) -> list:
    return [span for span in spans if span.name == name]


def _by_name(spans: list) -> dict:
    """The spans by name, the last of each name kept (one of each in these turns)."""
    return {span.name: span for span in spans}


@pytest.mark.django_db(transaction=True)
async def test_contents_are_exported_when_enabled(scripted, exported, settings):
    settings.OTEL_CAPTURE_MESSAGE_CONTENT = True
    scripted.enqueue(
        tool_call_response([("c1", "list_articles", '{"limit": 2}')]),
        text_response(["Nothing ", "here yet."]),
    )
    events, finished = await _traced(exported, "What did I ask?")
    (turn,) = await saved_turns()

    assert events[-1]["type"] == "done"
    spans = _by_name(finished)
    assert turn.trace_id == format(spans["invoke_agent docent"].context.trace_id, "032x")
    chats = _named(finished, "chat scripted-model")
    first_input = json.loads(chats[0].attributes["gen_ai.input.messages"])
    assert first_input[-1] == {
        "role": "user",
        "parts": [{"type": "text", "content": "What did I ask?"}],
    }
    output = json.loads(chats[1].attributes["gen_ai.output.messages"])
    assert output[0]["parts"] == [{"type": "text", "content": "Nothing here yet."}]
    tool = spans["execute_tool list_articles"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"limit": 2}
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == []


@pytest.mark.django_db(transaction=True)
async def test_a_failed_model_call_marks_its_span_and_the_turn(scripted, exported, settings):
    from testing_support.model_server import error_response

    settings.AGENT_MODEL_MAX_RETRIES = 0
    scripted.enqueue(error_response(500))
    events, finished = await _traced(exported, "Break")

    assert events[-1]["code"] == "model_error"
    spans = _by_name(finished)
    # What failed, not the exception class: an HTTP 500 and a garbled stream read apart.
    assert spans["chat scripted-model"].attributes["error.type"] == "http_5xx"
    assert spans["chat scripted-model"].status.is_ok is False
    assert spans["invoke_agent docent"].attributes["error.type"] == "model_error"
    assert spans["invoke_agent docent"].attributes["docent.turn.status"] == "error"


OFF = """
import asyncio, sys
import agent.loop
# (django and openai are the import-purity test's business: tests/agent)
loaded = [m for m in sys.modules if m.split(".")[0] in ("opentelemetry", "prometheus_client")]
assert not loaded, loaded

import django
django.setup()
from agent.llm.base import ModelTurn, TextDelta, ToolCall
from agent.loop import Limits, run_turn
from agent.tools import TOOLS
from ops import tracing
from ops.observer import TurnObservation

class Model:
    name, offline = "m", False
    max_output_tokens = None
    async def stream(self, messages, tools):
        if messages[-1]["role"] == "user":
            yield ModelTurn("", [ToolCall("c", "nope", "{}")])
        else:
            yield TextDelta("ok")
            yield ModelTurn("ok", [])

async def main():
    async def emit(event): pass
    with TurnObservation(turn_id="t", conversation_id="c", index=1) as seen:
        hooks = seen.hooks(model=Model(), tool_names=[tool.name for tool in TOOLS])
        result = await run_turn(messages=[{"role": "user", "content": "q"}], model=Model(),
                                tools=TOOLS, limits=Limits(), emit=emit, hooks=hooks)
        seen.finish(status=result.status, first_token_ms=1.0, duration_ms=2.0,
                    input_tokens=0, output_tokens=0, error_code="")
    assert result.status == "done" and seen.trace_id == ""

asyncio.run(main())
import config.asgi, config.urls  # the whole site as daphne loads it, /metrics included
assert tracing.tracer() is None
print(sorted({m.split(".")[1] for m in sys.modules if m.startswith("opentelemetry.")}))
"""


ON = """
import sys
import django
django.setup()
from ops import tracing
assert tracing.tracer() is not None
print(sorted({m.split(".")[1] for m in sys.modules if m.startswith("opentelemetry.")}))
"""


def _run(code: str, endpoint: str) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_with_the_endpoint_unset_the_sdk_is_never_imported():
    assert _run(OFF, "") == "[]"
    # With an endpoint the tracer loads the SDK and the exporter: the check above can fail.
    assert "sdk" in _run(ON, "http://127.0.0.1:9")


def test_each_turn_starts_its_own_trace_inside_another_span(exported):
    from opentelemetry import trace

    from ops.observer import TurnObservation

    outer = tracing.tracer().start_span("websocket connection")
    with trace.use_span(outer, end_on_exit=True):
        with TurnObservation(turn_id="t", conversation_id="c", index=1) as seen:
            pass

    (turn,) = _named(exported.get_finished_spans(), "invoke_agent docent")
    assert turn.parent is None
    assert seen.trace_id != format(outer.get_span_context().trace_id, "032x")


@pytest.mark.django_db(transaction=True)
async def test_a_search_shows_its_query_embedding_beside_its_statements(scripted, exported):
    # A search that took seconds while its statements took milliseconds left the rest of its
    # span unexplained: the query's embedding (and any wait for the engine) had no span.
    from django.conf import settings

    scripted.enqueue(
        tool_call_response([("c1", "search_knowledge_base", '{"query": "step caps"}')]),
        text_response(["Done."]),
    )
    _, spans = await _traced(exported, "How are steps capped?")

    (search,) = _named(spans, "execute_tool search_knowledge_base")
    (embedding,) = _named(spans, f"embeddings {settings.EMBEDDING_MODEL}")
    assert embedding.parent.span_id == search.context.span_id
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding.attributes["gen_ai.provider.name"] == "docent_local"
    # The statements run while the search ran; the turn's save, after `done`, may have its
    # own by now (under load, one CI run read them and failed).
    statements = [
        s
        for s in spans
        if s.attributes.get("db.system.name") == "postgresql"
        and search.start_time <= s.start_time <= search.end_time
    ]
    assert statements and all(s.parent.span_id == search.context.span_id for s in statements)


@pytest.mark.django_db(transaction=True)
async def test_the_turns_save_is_a_span_of_its_trace_with_its_statements(scripted, exported):
    """A trace showed the model and the tools but not the save, which runs after the final
    event: a database that was slow or down for saves did not appear in any trace."""
    scripted.enqueue(text_response(["Saved."]))
    _, spans = await _traced(exported, "Save me")
    (turn,) = await saved_turns()

    (root,) = _named(spans, "invoke_agent docent")
    (save,) = _named(spans, "save_turn")
    assert save.parent.span_id == root.context.span_id
    assert save.context.trace_id == root.context.trace_id
    assert save.attributes["docent.turn.id"] == str(turn.pk)
    assert save.attributes["docent.save.attempts"] == 1 and save.status.is_ok
    inside = [span for span in spans if span.parent and span.parent.span_id == save.context.span_id]
    # The save's statements (one WITH ... UPDATE/INSERT) nest under it.
    assert inside and {span.attributes["db.system.name"] for span in inside} == {"postgresql"}
    assert save.end_time > save.start_time


@pytest.mark.django_db(transaction=True)
async def test_a_turn_cut_by_the_drain_marks_its_root_span_failed(scripted, exported):
    """A turn the drain cut told its visitor `unavailable` and logged a WARNING, yet its root
    span ended OK with no `error.type`: a trace search for failed turns missed every one."""
    from agent.runner import ChatMessage, TurnRunner, Visitor

    scripted.enqueue(text_response(["Still "], hold=True))
    runner, events = TurnRunner(), []

    async def emit(event: dict) -> None:
        events.append(event)

    visitor = Visitor(session_key="d" * 32, client_ip="203.0.113.9")
    turn = asyncio.create_task(
        runner.run(message=ChatMessage(content="Long one"), visitor=visitor, emit=emit)
    )
    await asyncio.to_thread(wait_until, lambda: scripted.requests, "the model has the question")
    await runner.shutdown(drain=0, timeout=60)
    await asyncio.wait([turn])  # cancelled by the drain

    assert events[-1]["code"] == "unavailable"
    (root,) = _named(exported.get_finished_spans(), "invoke_agent docent")
    assert root.attributes["docent.turn.status"] == "interrupted"
    assert root.attributes["error.type"] == "unavailable" and root.status.is_ok is False


@pytest.mark.django_db(transaction=True)
async def test_a_save_the_database_refused_shows_spooled_in_its_span(
    scripted,
    exported,
    monkeypatch,
    database_outage,  # noqa: F811
):
    """The incident table sends the operator to the `save_turn` span for a database that is
    down for saves: three attempts and `error.type=spooled`, the turn's id on it."""
    from agent.runner import runner

    outage = database_outage
    outage_as_saves_start(monkeypatch, outage)
    scripted.enqueue(text_response(["Kept."]))
    socket = await connect()
    await ask(socket, "Keep this")
    assert await runner.saver.drain(timeout=20)
    outage.end()
    await socket.disconnect()

    (save,) = _named(exported.get_finished_spans(), "save_turn")
    assert save.attributes["docent.save.attempts"] == 3
    assert save.attributes["error.type"] == "spooled" and save.status.is_ok is False


@pytest.mark.django_db(transaction=True)
async def test_a_model_calls_span_says_how_long_its_retries_waited(scripted, exported, settings):
    """Two 503s, then an answer: the `chat` span's time was mostly the endpoint's failures and
    the waits before asking again, and nothing on it said so (only the retry counter did)."""
    from testing_support.model_server import error_response

    settings.AGENT_MODEL_MAX_RETRIES = 2
    scripted.enqueue(
        error_response(503, retry_after=0.3),
        error_response(503, retry_after=0.2),
        text_response(["Back."]),
    )
    events, spans = await _traced(exported, "Anyone there?")

    assert events[-1]["type"] == "done"
    (chat,) = _named(spans, "chat scripted-model")
    assert chat.status.is_ok and "error.type" not in chat.attributes  # the call succeeded
    assert chat.attributes["docent.model.retries"] == 2
    assert chat.attributes["docent.model.retry_backoff_ms"] == 500.0
    span_ms = (chat.end_time - chat.start_time) / 1e6
    assert 0 < chat.attributes["docent.model.failed_attempts_ms"] < span_ms - 500
    retries = [event for event in chat.events if event.name == "docent.model.retry"]
    assert [dict(event.attributes) | {"docent.retry.attempt_ms": 0} for event in retries] == [
        {
            "docent.retry.number": n,
            "error.type": "http_5xx",
            "docent.retry.attempt_ms": 0,
            "docent.retry.backoff_ms": backoff,
        }
        for n, backoff in ((1, 300.0), (2, 200.0))
    ]


@pytest.mark.django_db(transaction=True)
async def test_a_silent_attempt_shows_as_a_retry_with_no_wait(scripted, exported, settings):
    """An endpoint that said nothing for AGENT_MODEL_TIMEOUT is asked again at once: the time
    lost is the silence (the attempt), not a wait."""
    settings.AGENT_MODEL_TIMEOUT = 0.5
    settings.AGENT_MODEL_MAX_RETRIES = 1
    scripted.enqueue(text_response(["never"], hang_after=0), text_response(["Back."]))
    events, spans = await _traced(exported, "Anyone there?")

    assert events[-1]["type"] == "done"
    (chat,) = _named(spans, "chat scripted-model")
    (retry,) = [event for event in chat.events if event.name == "docent.model.retry"]
    assert retry.attributes["error.type"] == "timeout"
    assert retry.attributes["docent.retry.backoff_ms"] == 0
    assert retry.attributes["docent.retry.attempt_ms"] >= 500  # the silence it waited out
    assert chat.attributes["docent.model.failed_attempts_ms"] >= 500
