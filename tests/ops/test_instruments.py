"""Each instrument moves when its event happens, caused for real (in-process server)."""

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection
from django.utils import timezone
from prometheus_client import REGISTRY

from agent.runner import runner
from ops.logs import JsonFormatter
from testing_support.model_server import (
    Comment,
    ScriptedResponse,
    error_response,
    text_response,
    tool_call_response,
)
from testing_support.waits import wait_until
from tests.agent.chat_helpers import ask, connect, saved_turns
from tests.agent.test_persistence import (
    DatabaseOutage,
    database_outage,  # noqa: F401  (the fixture)
    outage_as_saves_start,
)
from tests.ops.prom import parse, value


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db(transaction=True)
async def test_refusals_are_counted_by_reason(settings):
    before = {
        r: sample("docent_rate_limit_refusals_total", reason=r) for r in ("session", "daily_budget")
    }
    settings.AGENT_MESSAGES_PER_MINUTE = 0
    socket = await connect()
    assert (await ask(socket, "One"))[-1]["code"] == "rate_limited"
    settings.AGENT_MESSAGES_PER_MINUTE = 10
    settings.AGENT_TOKENS_PER_DAY = 0
    assert (await ask(socket, "Two"))[-1]["code"] == "rate_limited"
    await socket.disconnect()

    assert sample("docent_rate_limit_refusals_total", reason="session") == before["session"] + 1
    assert (
        sample("docent_rate_limit_refusals_total", reason="daily_budget")
        == before["daily_budget"] + 1
    )


@pytest.mark.django_db(transaction=True)
async def test_open_sockets_follow_connect_and_disconnect():
    before = sample("docent_open_sockets")
    first, second = await connect(), await connect()
    assert sample("docent_open_sockets") == before + 2
    await first.disconnect()
    await second.disconnect()
    assert sample("docent_open_sockets") == before


@pytest.mark.django_db(transaction=True)
async def test_save_retries_and_spooled_turns_during_a_database_outage(
    scripted,
    monkeypatch,
    database_outage,  # noqa: F811
):
    # The fixture, not a DatabaseOutage of its own: left cut, this thread's connection failed
    # the tests that ran after this one (`-k "access or database or index"`).
    retries, spooled = (
        sample("docent_turn_save_retries_total"),
        sample("docent_turns_spooled_total"),
    )
    outage = database_outage
    outage_as_saves_start(monkeypatch, outage)
    scripted.enqueue(text_response(["Kept."]))
    socket = await connect()
    try:
        await ask(socket, "Keep this")
        assert await runner.saver.drain(timeout=20)
    finally:
        outage.end()
    await socket.disconnect()

    assert sample("docent_turn_save_retries_total") == retries + 2  # 3 attempts
    assert sample("docent_turns_spooled_total") == spooled + 1


@pytest.mark.django_db(transaction=True)
def test_indexing_jobs_and_lag(make_article, client, run_jobs):
    from blog.models import Article

    jobs = sample("docent_indexing_jobs_total", outcome="ok")
    article = make_article(title="Lag", slug="lag", body="Words to index.")
    waiting = parse(client.get("/metrics").content.decode())
    run_jobs()
    up_to_date = parse(client.get("/metrics").content.decode())

    # An edit the index has not caught up with (written without the signal that queues a job).
    now = timezone.now()
    Article.objects.filter(pk=article.pk).update(
        updated_at=now - timedelta(seconds=90), indexed_at=now - timedelta(seconds=100)
    )
    behind = parse(client.get("/metrics").content.decode())

    assert sample("docent_indexing_jobs_total", outcome="ok") == jobs + 1
    assert value(waiting, "docent_indexing_pending_articles") == 1
    assert value(up_to_date, "docent_indexing_pending_articles") == 0
    assert value(up_to_date, "docent_indexing_lag_seconds") == 0
    assert value(behind, "docent_indexing_pending_articles") == 1
    assert 90 <= value(behind, "docent_indexing_lag_seconds") < 600


@pytest.mark.django_db(transaction=True)
def test_an_index_embedded_by_another_model_is_stale(make_article, client, run_jobs):
    # After EMBEDDING_MODEL changed, every vector came from the old model, yet the gauges and
    # the panel said the index was up to date until the reindex had rewritten each article.
    from blog.models import Article, Chunk
    from blog.selectors import article_index_counts

    article = make_article(title="Models", slug="models", body="Words to index.")
    run_jobs()
    Article.objects.filter(pk=article.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert value(parse(client.get("/metrics").content.decode()), "docent_indexing_lag_seconds") == 0

    Chunk.objects.filter(article=article).update(embedding_model="an-older-model")
    switched = parse(client.get("/metrics").content.decode())

    assert value(switched, "docent_indexing_pending_articles") == 1
    assert value(switched, "docent_indexing_lag_seconds") >= 3600
    assert article_index_counts() == (1, 0)
    assert client.get("/api/index-status").json() == {"unindexed": 1, "searchable": 0}


@pytest.mark.django_db(transaction=True)
async def test_active_streams_count_a_turn_while_it_streams(scripted):
    before = sample("docent_active_streams")
    scripted.enqueue(text_response(["slow "] * 20, delay=0.05))
    socket = await connect()
    await socket.send_json_to({"type": "message", "content": "Take your time"})
    while (await socket.receive_json_from(timeout=10))["type"] != "text":
        pass
    during = sample("docent_active_streams")
    while (await socket.receive_json_from(timeout=10))["type"] not in {"done", "error"}:
        pass
    await socket.disconnect()
    assert await runner.saver.drain(timeout=10)

    assert during == before + 1
    assert sample("docent_active_streams") == before


@pytest.mark.django_db(transaction=True)
async def test_a_stopped_answer_counts_the_tokens_it_was_charged(scripted):
    """Stopped before its usage chunk, a stream reported no tokens and the counter did not move,
    though the endpoint was paid and the budget charged the estimate: a visitor who stopped
    every answer spent tokens no dashboard showed."""
    before = {d: sample("docent_model_tokens_total", direction=d) for d in ("input", "output")}
    scripted.enqueue(text_response(["slow "] * 40, delay=0.05))
    socket = await connect()
    await socket.send_json_to({"type": "message", "content": "Take your time"})
    while (await socket.receive_json_from(timeout=10))["type"] != "text":
        pass
    await socket.send_json_to({"type": "stop"})
    while (await socket.receive_json_from(timeout=10))["type"] not in {"cancelled", "error"}:
        pass
    await socket.disconnect()
    [turn] = await saved_turns()

    assert turn.status == "cancelled" and turn.input_tokens > 0 and turn.output_tokens > 0
    counted = {d: sample("docent_model_tokens_total", direction=d) - before[d] for d in before}
    assert counted == {"input": turn.input_tokens, "output": turn.output_tokens}


@pytest.mark.django_db(transaction=True)
async def test_a_stop_before_the_first_token_counts_the_prompt_and_the_answer_held(scripted):
    """The endpoint had the question and was reading it, maybe thinking unseen: a bot that sends
    and stops at once spends the prompt's tokens and the answer's share held for the call, and
    the counter shows them."""
    before = {d: sample("docent_model_tokens_total", direction=d) for d in ("input", "output")}
    scripted.enqueue(text_response(["late"], first_delay=30))
    socket = await connect()
    await socket.send_json_to({"type": "message", "content": "Stop me at once"})
    await asyncio.to_thread(wait_until, lambda: scripted.requests, "the model has the question")
    await socket.send_json_to({"type": "stop"})
    while (await socket.receive_json_from(timeout=10))["type"] not in {"cancelled", "error"}:
        pass
    await socket.disconnect()
    [turn] = await saved_turns()

    assert turn.status == "cancelled" and turn.input_tokens > 0
    assert turn.output_tokens == settings.AGENT_TOKENS_PER_ANSWER
    counted = {d: sample("docent_model_tokens_total", direction=d) - before[d] for d in before}
    assert counted == {"input": turn.input_tokens, "output": turn.output_tokens}


def turn_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "ops.observer" and hasattr(r, "turn")]


@pytest.mark.django_db(transaction=True)
async def test_answered_declined_and_failed_turns_are_counted_and_logged_one_line_each(
    scripted, make_article, caplog
):
    """`docent_turns_total` alone could not say how many answers declined, and nothing in the
    log said how a turn ended or where its time went."""
    from channels.db import database_sync_to_async

    caplog.set_level(logging.INFO, logger="ops.observer")
    article = await database_sync_to_async(make_article)(title="Caps", slug="caps", body="Five.")
    before = {
        verdict: sample("docent_turns_answered_total", answered=verdict)
        for verdict in ("true", "false")
    }
    up = sample("docent_feedback_votes_total", vote="up")
    model_errors = sample("docent_turn_errors_total", code="model_error")
    internal = sample("docent_turn_errors_total", code="internal")
    scripted.enqueue(
        tool_call_response([("c1", "get_article_detail", f'{{"article_id": {article.pk}}}')]),
        text_response(["Five: [Caps](/articles/caps/)."]),
        text_response(["I couldn't find anything about that in this blog's articles."]),
        error_response(400, message="the model refused the request"),
    )
    socket = await connect()
    answered = await ask(socket, "How many steps?")
    await ask(socket, "What is the weather?")
    failed = await ask(socket, "And now?")
    await saved_turns()
    saved = await socket_feedback(socket, answered[0]["conversation_id"], turn=1, vote="up")
    await socket.disconnect()

    assert (answered[-1]["answered"], failed[-1]["code"], saved["type"]) == (
        True,
        "model_error",
        "feedback_saved",
    )
    assert sample("docent_turns_answered_total", answered="true") == before["true"] + 1
    assert sample("docent_turns_answered_total", answered="false") == before["false"] + 1
    assert sample("docent_feedback_votes_total", vote="up") == up + 1
    # Which failure: the endpoint's (model_error) or ours (internal); the status said neither.
    assert sample("docent_turn_errors_total", code="model_error") == model_errors + 1
    assert sample("docent_turn_errors_total", code="internal") == internal

    first, second, third = turn_lines(caplog)
    assert first.levelname == "INFO" and first.getMessage().startswith("turn answered in ")
    assert (first.turn["steps"], first.turn["slowest_tool"]) == (2, "get_article_detail")
    assert first.turn["model_ms"] > 0 and first.turn["tool_ms"] > 0
    assert "2 steps" in first.getMessage() and "(slowest get_article_detail " in first.getMessage()
    assert second.getMessage().startswith("turn declined in ") and second.turn["answered"] is False
    assert third.levelname == "WARNING" and third.turn["error_code"] == "model_error"
    assert third.getMessage().startswith("turn error (model_error) in ")
    assert "1 step, " in third.getMessage() and "(HTTP 400)" in third.getMessage()


async def socket_feedback(socket, conversation_id: str, **frame) -> dict:
    await socket.send_json_to({"type": "feedback", "conversation_id": conversation_id, **frame})
    return await socket.receive_json_from(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_the_database_going_down_and_coming_back_shows_in_metrics(client):
    """With the database down, the gauges read from it vanished from /metrics without a word
    (no `up` to alert on), and a message refused for it was counted nowhere."""
    refused = sample("docent_turns_refused_total", reason="database")
    assert value(parse(client.get("/metrics").content.decode()), "docent_database_up") == 1

    outage = DatabaseOutage()
    outage.begin()
    try:
        down = parse(client.get("/metrics").content.decode())
        chat = client.post(
            "/api/chat",
            {"content": "Anyone there?"},
            content_type="application/json",
            headers={"Origin": "http://testserver"},
        )
        events = async_to_sync(_body)(chat)
    finally:
        outage.end()
        connection.close()  # cut by the outage; the flush after the test needs a new one
    back = parse(client.get("/metrics").content.decode())

    assert value(down, "docent_database_up") == 0
    assert ("docent_indexing_lag_seconds", frozenset()) not in down  # not a false "0 s behind"
    assert '"code":"unavailable"' in events  # was "internal": the panel said "went wrong"
    assert sample("docent_turns_refused_total", reason="database") == refused + 1
    assert value(back, "docent_database_up") == 1
    assert ("docent_queue_workers", frozenset()) in back


async def _body(response) -> str:
    return b"".join([chunk async for chunk in response.streaming_content]).decode()


@pytest.mark.django_db(transaction=True)
def test_turns_of_a_dead_worker_are_counted_when_recovered():
    """A killed worker's turn never reached its own count: docent_turns_total{status=
    "interrupted"} stayed 0 after a kill -9, whatever the admin showed."""
    from agent.models import WorkerLease
    from agent.tasks import turns_recover_periodic
    from tests.agent.test_checkpoints import started_turn

    recovered, interrupted = (
        sample("docent_turns_recovered_total"),
        sample("docent_turns_total", status="interrupted"),
    )
    long_ago = timezone.now() - timedelta(minutes=5)
    turn = started_turn("Cut off?")
    type(turn).objects.filter(pk=turn.pk).update(started_at=long_ago, worker="killed-worker")
    WorkerLease.objects.create(name="killed-worker", renewed_at=long_ago)

    with json_lines("agent.tasks") as lines:
        asyncio.run(turns_recover_periodic(timestamp=0))

    assert sample("docent_turns_recovered_total") == recovered + 1
    assert sample("docent_turns_total", status="interrupted") == interrupted + 1
    # "1 turns of a stopped worker marked interrupted" named no turn: nothing led to the
    # transcripts the kill cut, and the turn's own line died with its worker.
    [line] = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert (line["turn_id"], line["conversation_id"]) == (str(turn.pk), str(turn.conversation_id))
    assert line["level"] == "WARNING" and "killed-worker" in line["message"]


@contextmanager
def json_lines(name: str) -> Iterator[io.StringIO]:
    """What logger `name` writes inside the block, as LOG_FORMAT=json writes it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


@pytest.mark.django_db(transaction=True)
async def test_a_message_refused_as_busy_is_counted(settings):
    busy = sample("docent_turns_refused_total", reason="busy")
    settings.AGENT_TURNS_PER_SESSION = 0  # every slot of the session is taken
    socket = await connect()
    events = await ask(socket, "Room for one more?")
    await socket.disconnect()

    assert events[-1]["code"] == "busy"
    assert sample("docent_turns_refused_total", reason="busy") == busy + 1


@pytest.mark.django_db(transaction=True)
async def test_searches_count_empty_results_and_the_best_hits_relevance(
    scripted, make_article, run_jobs
):
    """Retrieval drifting (a new embedding model, a changed bar) showed only later, as more
    declined answers; nothing measured the searches themselves."""
    from channels.db import database_sync_to_async

    await database_sync_to_async(make_article)(
        title="Airship masts", slug="masts", body="A mooring mast holds the airship at its nose."
    )
    await database_sync_to_async(run_jobs)()
    hits, empty, observed = (
        sample("docent_searches_total", outcome="hits"),
        sample("docent_searches_total", outcome="empty"),
        sample("docent_search_top_relevance_count"),
    )
    scripted.enqueue(
        tool_call_response([("c1", "search_knowledge_base", '{"query": "airship mooring mast"}')]),
        tool_call_response([("c2", "search_knowledge_base", '{"query": "sourdough starter"}')]),
        text_response(["Masts: [Airship masts](/articles/masts/)."]),
    )
    socket = await connect()
    await ask(socket, "What holds an airship?")
    await socket.disconnect()
    await saved_turns()

    assert sample("docent_searches_total", outcome="hits") == hits + 1
    assert sample("docent_searches_total", outcome="empty") == empty + 1
    assert sample("docent_search_top_relevance_count") == observed + 1
    assert sample("docent_search_top_relevance_bucket", le="1.0") >= observed + 1


@pytest.mark.django_db(transaction=True)
async def test_a_turn_failing_outside_the_loop_logs_its_traceback_with_its_ids(monkeypatch):
    """DocentInternalErrors sends the operator to the log, where the traceback of a turn that
    failed outside the loop was written after its ids were unbound: no turn id led to it."""
    import agent.runner

    def broken(**kwargs):
        raise RuntimeError("a bug in the prompt")

    monkeypatch.setattr(agent.runner, "build_messages", broken)
    internal = sample("docent_turn_errors_total", code="internal")
    socket = await connect()
    with json_lines("agent.runner") as lines:
        events = await ask(socket, "Anything?")
    await socket.disconnect()
    [turn] = await saved_turns()

    assert events[-1]["code"] == "internal"
    assert sample("docent_turn_errors_total", code="internal") == internal + 1
    started, line = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert started["message"].startswith("turn 1 started on worker ")  # INFO, the same ids
    assert started["turn_id"] == str(turn.pk)
    assert (line["level"], line["message"]) == ("ERROR", "chat turn failed outside the loop")
    assert (line["turn_id"], line["conversation_id"]) == (str(turn.pk), str(turn.conversation_id))
    assert "RuntimeError: a bug in the prompt" in line["exception"]


@pytest.mark.django_db(transaction=True)
async def test_a_stream_kept_alive_but_never_ending_is_not_called_silent(scripted, settings):
    """An endpoint hung behind a proxy that sends keep-alive comments is cut at
    AGENT_MODEL_CALL_SECONDS; it was counted `timeout`, which the README defines as nothing
    received for AGENT_MODEL_TIMEOUT s: the operator looked for a silent endpoint."""
    settings.AGENT_MODEL_CALL_SECONDS = 1
    settings.AGENT_MODEL_MAX_RETRIES = 0
    deadline = sample("docent_model_errors_total", reason="deadline")
    scripted.enqueue(ScriptedResponse(chunks=[Comment()] * 400, delay=0.05))  # 20 s of pings
    socket = await connect()
    events = await ask(socket, "Still there?")
    await socket.disconnect()
    await saved_turns()

    assert events[-1]["code"] == "model_error"
    assert sample("docent_model_errors_total", reason="deadline") == deadline + 1


@pytest.mark.django_db(transaction=True)
async def test_a_running_turns_budget_refusal_writes_the_refusal_line(scripted, settings, caplog):
    """The day's budget room for the turn's start hold but not for its first model call: the
    turn ended `rate_limited` and was counted, but no `rate limit daily_budget refused ...`
    line named the address (the start's refusal and the message limits wrote one)."""
    from channels.testing import WebsocketCommunicator

    from agent import ratelimit
    from agent.shared import state_reset
    from config.asgi import application
    from ops import refusals
    from tests.agent.chat_helpers import HOST, ORIGIN

    state_reset()  # today's tokens as other tests left them
    refusals.reset()
    ratelimit._site_budget_short_said[0] = ""  # said once a day per process
    before = sample("docent_rate_limit_refusals_total", reason="daily_budget")
    settings.AGENT_TOKENS_RESERVE = 100
    settings.AGENT_TOKENS_PER_DAY = 500  # the hold fits; the prompt and an answer do not
    socket = WebsocketCommunicator(application, "/ws/chat/", headers=[ORIGIN, HOST])
    socket.scope["client"] = ["203.0.113.7", 50000]
    assert (await socket.connect(timeout=10))[0]
    with caplog.at_level("WARNING", logger="ops.refusals"):
        events = await ask(socket, "What is a mast?")
    await socket.disconnect()
    await saved_turns()

    assert events[0]["type"] == "start" and events[-1]["code"] == "rate_limited"
    assert sample("docent_rate_limit_refusals_total", reason="daily_budget") == before + 1
    [said] = [r.getMessage() for r in caplog.records if r.name == "ops.refusals"]
    assert said.startswith("rate limit daily_budget refused a request from 203.0.113.7;")
    # Not "spent, every chat message refused": the budget had room, less than the turn needed.
    [site] = [r.getMessage() for r in caplog.records if r.name == "agent.ratelimit"]
    assert site.startswith(
        "the site's daily token budget (AGENT_TOKENS_PER_DAY=500) had less room left for "
    )
    assert "than a running turn needed (" in site and "is spent" not in site


@pytest.mark.django_db
def test_the_lost_workers_help_names_the_setting_not_a_minute(client):
    """Its help said "silent for a minute" after the silence became
    TASK_WORKER_STALLED_SECONDS (15 s in the killed-worker test)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = client.get("/metrics").content.decode()
    helps = {family.name: family.documentation for family in text_string_to_metric_families(text)}

    assert "TASK_WORKER_STALLED_SECONDS" in helps["docent_task_workers_lost"]
    assert "a minute" not in helps["docent_task_workers_lost"]
