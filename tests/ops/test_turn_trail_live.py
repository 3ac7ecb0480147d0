"""One reader's complaint, "my answer stopped halfway", followed from the admin to the logs and
the trace: a real daphne killed mid-answer (`kill -9`), its turn recovered by the job.

Before: the turn's trace id was written by its final save, which a killed process never makes,
so the admin showed no trace; its root and model spans died unexported with the process, so
the collector had nothing under any id; and its worker wrote no line at all (the summary line
comes at the end), so a grep for the turn id found only the recovery's, 30 s later.
"""

import asyncio
import json
import threading
import time

import pytest
from django.db import connection
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent.models import Turn
from agent.tasks import turns_recover_periodic
from ops import tracing
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import text_response, tool_call_response
from testing_support.waits import wait_until
from tests.ops.chat import ask
from tests.ops.otlp_receiver import OTLPReceiver

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Where did my answer go?"


def _ask_in_background(url: str) -> None:
    def run() -> None:
        try:
            ask(url, QUESTION)
        except Exception:  # noqa: BLE001, S110 - the server is killed under it, on purpose
            pass

    threading.Thread(target=run, daemon=True).start()


def _checkpointed() -> Turn | None:
    """The running turn once a checkpoint has written its text and its trace id."""
    turn = Turn.objects.filter(user_message=QUESTION, status="running").first()
    return turn if turn is not None and turn.trace_id and turn.answer else None


def _recovery_span(settings):
    """The one span of the recovery job, run here with a tracer of its own once the killed
    turn's lease (shortened to 1 s) has run out."""
    exporter = InMemorySpanExporter()
    tracing.reset(tracing.tracer_build(exporter, batch=False))
    try:
        settings.AGENT_LEASE_SECONDS = 1
        time.sleep(1.5)
        asyncio.run(turns_recover_periodic(timestamp=0))
    finally:
        tracing.reset()
    (recovered,) = exporter.get_finished_spans()
    return recovered


def test_a_killed_turn_leads_from_the_admin_to_its_lines_and_its_trace(
    model_server, tmp_path, settings, staff_client
):
    model_server.enqueue(text_response(["Half ", "an ", "answer"], hold=True))
    env = {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_CHECKPOINT_SECONDS": "0.3",
        "LOG_FORMAT": "json",
    }
    name = database_url(connection.settings_dict["NAME"])
    with OTLPReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        with LiveServer("killed-turn", name, env, tmp_path / "spool") as server:
            _ask_in_background(server.url)
            wait_until(_checkpointed, "the turn's text and trace id were checkpointed")
            server.process.kill()  # kill -9: no summary line, no save, no span ended
            server.process.wait(timeout=10)
            output = server.output()
        time.sleep(1)  # the receiver gets whatever a batch had sent before the kill
        received = list(receiver.spans)
    turn = _checkpointed()
    turn_id = str(turn.pk)

    # The worker's lines: one grep of the turn id finds when it began and on which process.
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("turn_id") == turn_id]
    assert [line["message"] for line in mine] == [f"turn 1 started on worker {turn.worker}"]
    assert mine[0]["trace_id"] == turn.trace_id
    assert f":{server.pid}:" in turn.worker
    assert not [span for span in received if span["trace_id"] == turn.trace_id]

    # The recovery job, in this process, with its own tracer: a span in the turn's trace.
    recovered = _recovery_span(settings)
    assert recovered.name == "recover_turn"
    assert format(recovered.context.trace_id, "032x") == turn.trace_id
    assert recovered.attributes["docent.turn.id"] == turn_id
    assert recovered.attributes["docent.turn.worker"] == turn.worker
    assert recovered.attributes["error.type"] == "interrupted"

    # The admin's transcript shows the ids and the process to grep for.
    turn.refresh_from_db()
    assert turn.status == "interrupted"
    settings.OTEL_TRACE_URL_TEMPLATE = "https://traces.example/trace/{trace_id}"
    page = staff_client.get(f"/admin/agent/conversation/{turn.conversation_id}/change/")
    html = page.content.decode()
    assert f"<code>{turn_id}</code>" in html
    assert f'href="https://traces.example/trace/{turn.trace_id}"' in html
    assert f"<code>{turn.worker}</code>" in html


def test_a_killed_turns_recovery_hangs_under_the_same_root_as_its_exported_spans(
    model_server, tmp_path, settings
):
    """The spans a turn exported before its process was killed (a finished tool call) name its
    root span as their parent. The recovery's span named a made-up parent: one trace id, but
    two unrelated pieces in a trace viewer, and no way to follow the turn across the crash."""
    model_server.enqueue(
        tool_call_response([("call-1", "list_articles", "{}")]),
        text_response(["Half ", "an ", "answer"], hold=True),
    )
    env = {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_CHECKPOINT_SECONDS": "0.3",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # ms: the tool's span is exported before the kill
    }
    name = database_url(connection.settings_dict["NAME"])
    with OTLPReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        with LiveServer("killed-after-a-tool", name, env, tmp_path / "spool") as server:
            _ask_in_background(server.url)
            wait_until(_checkpointed, "the turn's text and trace id were checkpointed")
            turn = _checkpointed()
            spans = receiver.wait_for(
                lambda spans: any(
                    s["name"] == "execute_tool list_articles" and s["trace_id"] == turn.trace_id
                    for s in spans
                )
            )
            server.process.kill()  # kill -9: the root span is never exported
            server.process.wait(timeout=10)
    (tool,) = [s for s in spans if s["name"] == "execute_tool list_articles"]
    assert not [s for s in spans if s["span_id"] == tool["parent_id"]]  # the root died with it

    recovered = _recovery_span(settings)

    assert format(recovered.context.trace_id, "032x") == turn.trace_id
    assert format(recovered.parent.span_id, "016x") == tool["parent_id"]
