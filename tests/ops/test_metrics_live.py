"""/metrics scraped over a real socket from real daphne processes after real turns."""

import os
import re

import pytest
from django.db import connection

from agent.models import Turn
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import error_response, text_response, tool_call_response
from tests.ops.chat import ask
from tests.ops.prom import scrape, value

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = {"OPENAI_API_KEY": "test", "AGENT_MODEL": "scripted", "AGENT_MODEL_MAX_RETRIES": "0"}


def _server(name: str, model_server, tmp_path, **extra: str) -> LiveServer:
    env = {**MODEL, "OPENAI_BASE_URL": model_server.base_url, **extra}
    return LiveServer(name, database_url(connection.settings_dict["NAME"]), env, tmp_path / name)


def test_counters_and_histograms_after_real_turns(model_server, tmp_path):
    model_server.enqueue(
        # Turn 1: two tools (one the model made up), then the answer.
        tool_call_response(
            [("c1", "list_articles", "{}"), ("c2", "no_such_tool", "{}")], usage=(100, 7)
        ),
        text_response(["Nothing ", "published yet."], usage=(120, 9)),
        # Turn 2: a plain answer.
        text_response(["Hello."], usage=(40, 3)),
        # Turn 3: the model endpoint fails.
        error_response(500),
    )
    with _server("metrics", model_server, tmp_path) as server:
        assert ask(server.url, "What is new?")[-1]["type"] == "done"
        assert ask(server.url, "Hi")[-1]["type"] == "done"
        assert ask(server.url, "Fail please")[-1]["type"] == "error"
        samples = scrape(server.url)
        output = server.output()

    # The failed tool call is in the log, with the turn it belongs to; the good one is not.
    failed = [line for line in output.splitlines() if "ops.observer: tool" in line]
    assert len(failed) == 1
    assert re.search(
        r"WARNING ops\.observer: tool unknown failed \(unknown_tool\) after \d+ ms: .*no_such_tool",
        failed[0],
    )
    turn = Turn.objects.get(user_message="What is new?")
    assert failed[0].endswith(f"[turn {turn.pk}]")

    assert value(samples, "docent_turns_total", status="done") == 2
    assert value(samples, "docent_turns_total", status="error") == 1
    assert value(samples, "docent_model_calls_total", outcome="ok") == 3
    assert value(samples, "docent_model_calls_total", outcome="error") == 1
    assert value(samples, "docent_tool_calls_total", tool="list_articles", outcome="ok") == 1
    # A name the model invented is counted under one label, never as a new series.
    assert value(samples, "docent_tool_calls_total", tool="unknown", outcome="unknown_tool") == 1
    assert value(samples, "docent_tool_duration_seconds_count", tool="list_articles") == 1
    # Each model call's latency, by outcome: what "the model is slow" is read from.
    assert value(samples, "docent_model_call_seconds_count", outcome="ok") == 3
    assert value(samples, "docent_model_call_seconds_count", outcome="error") == 1
    assert 0 < value(samples, "docent_model_call_seconds_sum", outcome="ok") < 60
    assert value(samples, "docent_model_tokens_total", direction="input") == 260
    assert value(samples, "docent_model_tokens_total", direction="output") == 19
    # Every turn has a duration; the failed one never streamed a first token.
    assert value(samples, "docent_turn_duration_seconds_count") == 3
    assert value(samples, "docent_turn_first_token_seconds_count") == 2
    assert value(samples, "docent_turn_first_token_seconds_bucket", le="+Inf") == 2
    assert 0 < value(samples, "docent_turn_duration_seconds_sum") < 60
    assert value(samples, "docent_active_streams") == 0
    assert value(samples, "docent_indexing_lag_seconds") == 0


def test_two_workers_add_up_and_a_stopped_worker_keeps_its_counts(model_server, tmp_path):
    shared = tmp_path / "prometheus"
    model_server.enqueue(*(text_response([f"Answer {n}."]) for n in range(3)))
    env = {"PROMETHEUS_MULTIPROC_DIR": str(shared)}
    with (
        _server("worker-a", model_server, tmp_path, **env) as a,
        _server("worker-b", model_server, tmp_path, **env) as b,
    ):
        ask(a.url, "One")
        ask(b.url, "Two")
        ask(b.url, "Three")
        from_a, from_b = scrape(a.url), scrape(b.url)
        b_gauges = re.compile(rf"^gauge_livesum_{b.process.pid}\.db$")
        assert any(b_gauges.match(name) for name in os.listdir(shared))
        assert b.stop() == 0
        # Its live gauges went with it; its counters stay in the totals.
        assert not any(b_gauges.match(name) for name in os.listdir(shared))
        after_b_stopped = scrape(a.url)

    for samples in (from_a, from_b, after_b_stopped):
        assert value(samples, "docent_turns_total", status="done") == 3
        assert value(samples, "docent_model_calls_total", outcome="ok") == 3
        assert value(samples, "docent_turn_duration_seconds_count") == 3
        assert value(samples, "docent_active_streams") == 0
