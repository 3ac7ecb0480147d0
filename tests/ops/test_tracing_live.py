"""Traces from a real daphne to a real OTLP/HTTP receiver, and JSON logs that point at them."""

import json
import time

import pytest
from django.db import connection

from agent.models import Turn
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import error_response, text_response, tool_call_response
from tests.ops.chat import ask
from tests.ops.otlp_receiver import OTLPReceiver

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Which private words did I type?"
ANSWER = ["The ", "confidential answer."]
CLIENT, INTERNAL = 3, 1  # OTLP SpanKind values


def _saved_turns(count: int) -> list[Turn]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        # A turn's row exists from its start; its trace id comes with the final save.
        turns = list(Turn.objects.exclude(status="running").order_by("started_at"))
        if len(turns) == count:
            return turns
        time.sleep(0.1)
    raise AssertionError("turns were not saved")


def _complete(spans: list[dict]) -> bool:
    names = [span["name"] for span in spans]
    return names.count("invoke_agent docent") == 2 and names.count("chat scripted") == 3


def test_one_trace_per_turn_with_genai_spans_and_no_content(model_server, tmp_path):
    search = ("call_s", "search_knowledge_base", '{"query": "private words"}')
    model_server.enqueue(
        error_response(500, retry_after=0),  # retried inside the first model call (logs a line)
        tool_call_response([search, ("call_l", "list_articles", "{}")], usage=(100, 7)),
        text_response(ANSWER, usage=(120, 9)),
        text_response(["Second."], usage=(40, 3)),
    )
    env = {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_MODEL_MAX_RETRIES": "1",
        "AGENT_TOOL_TIMEOUT": "120",  # the first search loads the embedding model
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_SERVICE_NAME": "docent-test",
        "LOG_FORMAT": "json",
    }
    name = database_url(connection.settings_dict["NAME"])
    with OTLPReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        with LiveServer("tracing", name, env, tmp_path / "spool") as server:
            first = ask(server.url, QUESTION)
            ask(server.url, "And again?")
            spans = receiver.wait_for(_complete)
            turns = _saved_turns(2)
            output = server.output()
    assert first[-1]["type"] == "done", first

    # One trace per turn, its root the turn; the trace id is saved with the turn.
    roots = [span for span in spans if not span["parent_id"]]
    assert [root["name"] for root in roots] == ["invoke_agent docent"] * 2
    assert {root["trace_id"] for root in roots} == {turn.trace_id for turn in turns}
    assert len({span["trace_id"] for span in spans}) == 2
    root = next(r for r in roots if r["trace_id"] == turns[0].trace_id)
    assert root["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert root["attributes"]["gen_ai.conversation.id"] == str(turns[0].conversation_id)
    assert root["attributes"]["docent.turn.id"] == str(turns[0].pk)
    assert root["resource"]["service.name"] == "docent-test"
    mine = [span for span in spans if span["trace_id"] == root["trace_id"]]

    chats = [span for span in mine if span["name"] == "chat scripted"]
    assert len(chats) == 2
    for chat in chats:
        assert chat["parent_id"] == root["span_id"] and chat["kind"] == CLIENT
        attributes = chat["attributes"]
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"] == "scripted"
        assert attributes["gen_ai.response.model"] == "scripted"
    tokens = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
    usage = sorted(tuple(chat["attributes"][key] for key in tokens) for chat in chats)
    assert usage == [(100, 7), (120, 9)]

    tools = {span["name"]: span for span in mine if span["name"].startswith("execute_tool ")}
    assert set(tools) == {"execute_tool search_knowledge_base", "execute_tool list_articles"}
    searched = tools["execute_tool search_knowledge_base"]
    assert searched["parent_id"] == root["span_id"] and searched["kind"] == INTERNAL
    assert searched["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert searched["attributes"]["gen_ai.tool.name"] == "search_knowledge_base"
    assert searched["attributes"]["gen_ai.tool.call.id"] == "call_s"

    # The query's embedding and the search's database statements, children of the search.
    children = [span for span in mine if span["parent_id"] == searched["span_id"]]
    assert children and all(child["kind"] == CLIENT for child in children)
    (embedding,) = [c for c in children if c["name"].startswith("embeddings ")]
    assert embedding["attributes"]["gen_ai.operation.name"] == "embeddings"
    queries = [c for c in children if c is not embedding]
    assert queries and {q["attributes"]["db.system.name"] for q in queries} == {"postgresql"}
    assert "SELECT" in {q["attributes"]["db.operation.name"] for q in queries}
    # The search's own statements go out on raw psycopg cursors, which Django's wrapper never
    # sees: the round trip with the vector lists and the full-text half on its side connection
    # had no span, so a search slowed by many chunks did not say which half took the time.
    (batch,) = [q for q in queries if q["attributes"].get("db.operation.batch.size")]
    assert batch["attributes"]["db.operation.name"].startswith("BATCH")
    assert "blog_chunk.embedding <=>" in batch["attributes"]["db.query.text"]
    (side,) = [q for q in queries if q["attributes"].get("docent.db.side_connection")]
    assert side["attributes"]["db.operation.name"] in {"SELECT", "WITH"}
    assert "search_vector @@" in side["attributes"]["db.query.text"]
    for statement in (batch, side):
        assert statement["attributes"]["db.response.returned_rows"] >= 0

    # Message contents stay out unless enabled.
    everything = json.dumps([span["attributes"] for span in spans])
    for private in (QUESTION, "private words", "confidential answer", "Second."):
        assert private not in everything
    assert "gen_ai.input.messages" not in everything

    # The retry's log line carries the turn's ids and its trace id.
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    retried = [line for line in lines if line["message"].startswith("model call failed")]
    assert len(retried) == 1
    assert retried[0]["turn_id"] == str(turns[0].pk)
    assert retried[0]["conversation_id"] == str(turns[0].conversation_id)
    assert retried[0]["trace_id"] == turns[0].trace_id
