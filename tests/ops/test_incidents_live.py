"""Incidents caused for real against live daphne processes; each instrument must show them."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx
import psutil
import pytest
import redis
from django.db import connection
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from websockets.exceptions import InvalidStatus

from agent.models import Turn
from ops import multiproc
from testing_support.live_server import LiveServer, database_url, free_port
from testing_support.model_server import (
    ScriptedResponse,
    error_response,
    text_response,
    tool_call_response,
)
from testing_support.waits import wait_until
from tests.agent.test_persistence import DatabaseOutage
from tests.ops.chat import ask
from tests.ops.otlp_receiver import OTLPReceiver
from tests.ops.prom import parse, scrape, value
from tests.security.clients import same_minute, ws_open
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
MODEL = {"OPENAI_API_KEY": "test", "AGENT_MODEL": "scripted"}


def _server(name: str, tmp_path, **extra: str) -> LiveServer:
    url = database_url(connection.settings_dict["NAME"])
    return LiveServer(name, url, extra, tmp_path / name)


def _manage(*args: str, **extra: str) -> subprocess.Popen:
    """A manage.py command of its own against the test database (the real queue, not the
    test process's in-memory one)."""
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict["NAME"]), **extra}
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _defer(task: str, **kwargs) -> None:
    code = (
        "from procrastinate.contrib.django import app; "
        f"app.configure_task(name={task!r}, queue='index').defer(**{kwargs!r})"
    )
    assert _manage("shell", "-c", code).wait(timeout=120) == 0


def _queue_empty(queue: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM procrastinate_events WHERE job_id IN"
            " (SELECT id FROM procrastinate_jobs WHERE queue_name = %s)",
            [queue],
        )
        cursor.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s", [queue])


def test_a_failing_slow_or_garbled_model_endpoint_is_told_apart(model_server, tmp_path):
    """HTTP 500s, a garbled stream and an endpoint gone quiet all ended as `model_error`:
    the metrics, the span and the log said the same word for an outage and a bad proxy."""
    model_server.enqueue(
        error_response(500),  # retried once, then fails again
        error_response(500),
        ScriptedResponse(chunks=["{not json"]),
        text_response(["Half"], hold=True),  # then nothing: the idle timeout
    )
    env = {
        **MODEL,
        "OPENAI_BASE_URL": model_server.base_url,
        "AGENT_MODEL_MAX_RETRIES": "1",
        "AGENT_MODEL_TIMEOUT": "1",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
    }
    with _server("model-incidents", tmp_path, **env) as server:
        ends = [ask(server.url, q)[-1] for q in ("Down?", "Garbled?", "Quiet?")]
        samples = scrape(server.url)
        output = server.output()

    assert [end.get("code") for end in ends] == ["model_error"] * 3
    assert value(samples, "docent_model_errors_total", reason="http_5xx") == 1
    assert value(samples, "docent_model_errors_total", reason="bad_response") == 1
    assert value(samples, "docent_model_errors_total", reason="timeout") == 1
    assert value(samples, "docent_model_retries_total", reason="http_5xx") == 1
    assert value(samples, "docent_model_calls_total", outcome="error") == 3

    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    turns = [line for line in lines if line["logger"] == "ops.observer" and "steps" in line]
    assert [turn["model_failure"] for turn in turns] == ["http_5xx", "bad_response", "timeout"]
    for turn in turns:
        assert turn["level"] == "WARNING" and turn["error_code"] == "model_error"
        assert turn["turn_id"] and turn["conversation_id"] and turn["steps"] == 1
        assert "input_tokens" in turn and "output_tokens" in turn
        assert turn["duration_ms"] >= turn["model_ms"] > 0
    # A 500 and a garbled stream (a proxy's page) answered nothing a model billed, so they
    # record no tokens; half a reply was answered and records the prompt's estimate.
    assert [turn["input_tokens"] > 0 for turn in turns] == [False, False, True]


def test_a_stalled_queue_and_a_job_that_failed_for_good(tmp_path):
    """Nothing said the task worker was gone or that jobs were piling up or failing: the
    only queue metric counted indexing jobs that ran."""
    _queue_empty("index")  # the job table is not a Django model's: other tests' rows stay
    with _server("queue", tmp_path) as server:  # no task worker: TASK_WORKER_IN_PROCESS=false
        _defer("blog.article_index", article_id=987654)  # gone: succeeds once it runs
        _defer("docent.task_removed_by_a_deploy")  # fails: no worker knows it
        stalled = scrape(server.url)
        worker = _manage("worker")
        try:

            def drained() -> bool:
                samples = scrape(server.url)
                return (
                    value(samples, "docent_queue_jobs", queue="index", status="todo") == 0
                    and value(samples, "docent_queue_jobs", queue="index", status="failed") == 1
                )

            wait_until(drained, "the worker ran the queued jobs", seconds=120)
            working = scrape(server.url)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
        stopped = scrape(server.url)

    assert value(stalled, "docent_queue_jobs", queue="index", status="todo") == 2
    # Reported at 0 rather than left out, so delta() sees the first failure.
    assert (
        stalled[("docent_queue_jobs", frozenset({("queue", "index"), ("status", "failed")}))] == 0
    )
    assert value(stalled, "docent_queue_oldest_waiting_seconds", queue="index") > 0
    assert value(stalled, "docent_queue_workers") == 0
    assert value(working, "docent_queue_workers") == 1
    assert ("docent_queue_oldest_waiting_seconds", frozenset({("queue", "index")})) not in working
    assert value(stopped, "docent_queue_workers") == 0  # a clean stop unregisters at once


def test_the_in_process_task_worker_survives_a_database_restart(tmp_path):
    """procrastinate stops its worker when its LISTEN connection dies: after one database
    blip, `make run` served on with no task worker for good, and jobs piled up unseen."""
    env = {"TASK_WORKER_IN_PROCESS": "true"}
    # Other tests' index jobs stay in the job table (no Django model's, so never flushed): one
    # left "doing" by a killed server holds the lock "index" until stalled-job recovery, and
    # those queued behind it kept "todo" above 0 past the deadline in a full run.
    _queue_empty("index")
    with _server("worker-restart", tmp_path, **env) as server:
        wait_until(lambda: value(scrape(server.url), "docent_queue_workers") >= 1, "a worker")
        first = max(_worker_ids())  # this server's: registered last
        outage = DatabaseOutage()
        outage.begin()
        try:
            # Until its run has ended (procrastinate's stop included, which cannot unregister
            # the worker while the database is away), as in an outage of some seconds.
            wait_until(
                lambda: "restarting in 5 s" in server.output(),
                "the worker noticed the outage",
                seconds=60,
            )
        finally:
            outage.end()
            connection.close()
        _defer("blog.article_index", article_id=987654)

        def ran() -> bool:
            samples = scrape(server.url)
            return value(samples, "docent_queue_jobs", queue="index", status="todo") == 0

        wait_until(ran, "a job queued after the outage ran", seconds=90)
        alive = lambda: value(scrape(server.url), "docent_queue_workers") >= 1  # noqa: E731
        wait_until(alive, "the worker stays up", seconds=90)
        restarts = value(scrape(server.url), "docent_task_worker_restarts_total")
        rows = _worker_ids()
        output = server.output()

    # Once back, it stays back: the Django connection the outage killed is closed before the
    # next start (without that, each start stopped again on it: three restarts, not one).
    assert 1 <= restarts <= 2
    # The worker the outage stopped is not a worker killed: its row goes with the restart.
    # It stayed, and the next prune said it "died without stopping (killed, out of memory…)"
    # and counted it in docent_task_workers_lost_total (DocentTaskWorkerKilled).
    assert first not in rows
    assert f"task worker {first} died without stopping" not in output


def _worker_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM procrastinate_workers")
        return [row[0] for row in cursor.fetchall()]


def _read_events(url: str, content: str, into: list[dict]) -> None:
    """The turn's events, as many as arrived (the drain's last one included)."""
    with httpx.Client(base_url=url, timeout=60, headers={"Origin": url}) as client:
        try:
            with client.stream("POST", "/api/chat", json={"content": content}) as reply:
                for line in reply.iter_lines():
                    if line.startswith("data:"):
                        into.append(json.loads(line[5:]))
        except httpx.RemoteProtocolError:
            # The draining process sends `unavailable`, then exits before the chunked body's
            # last chunk (as in tests/docent/test_drain.py): the events are what count here.
            pass


def test_a_draining_worker_shows_on_its_neighbour(model_server, tmp_path):
    """A worker shutting down refused turns and cut the running ones, and no metric said
    a worker was draining: the scraper cannot reach it (its socket closes first)."""
    shared = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus")}
    model_server.enqueue(text_response(["Still "], hold=True))
    env = {**MODEL, "OPENAI_BASE_URL": model_server.base_url, **shared}
    with (
        _server("draining", tmp_path, **env, AGENT_DRAIN_SECONDS="3") as leaving,
        _server("staying", tmp_path, **env) as staying,
    ):
        held: list[dict] = []
        asking = threading.Thread(target=_read_events, args=(leaving.url, "Long one", held))
        asking.start()
        wait_until(lambda: value(scrape(staying.url), "docent_active_streams") == 1, "a turn")
        leaving.process.terminate()
        wait_until(lambda: value(scrape(staying.url), "docent_draining") == 1, "the drain")
        asking.join(timeout=60)
        assert leaving.process.wait(timeout=60) == 0  # a second SIGTERM would cut the drain
        after = scrape(staying.url)

    assert held[-1]["code"] == "unavailable"
    assert value(after, "docent_draining") == 0  # it exited: its live gauge went with it
    assert value(after, "docent_turns_total", status="interrupted") == 1


async def test_floods_refused_at_the_door_are_counted(tmp_path):
    """Sockets past AGENT_SOCKETS_PER_MINUTE_PER_IP, searches past their limit and admin
    sign-in attempts were refused without a trace in the metrics: only chat messages were."""
    limits = {
        "AGENT_SOCKETS_PER_MINUTE_PER_IP": "1",
        "SEARCH_REQUESTS_PER_MINUTE_PER_IP": "1",
        "ADMIN_LOGIN_ATTEMPTS": "1",
        "AGENT_FEEDBACK_PER_MINUTE": "1",
    }
    with _server("floods", tmp_path, **limits) as server:
        same_minute()
        socket = await ws_open(server)
        with pytest.raises(InvalidStatus):
            await ws_open(server)
        await socket.close()
        # The first search loads the embedding model: seconds on a busy machine.
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            statuses = [(await client.get("/api/search?q=mast")).status_code for _ in range(6)]
            statuses[2:] = []  # a storm of four: four refusals counted, one line said
            login = {"username": "admin", "password": "guess"}
            statuses += [(await client.post("/admin/login/", data=login)).status_code]
            statuses += [(await client.post("/admin/login/", data=login)).status_code]
        votes = await asyncio.to_thread(_vote_twice, server.url)
        samples = await asyncio.to_thread(scrape, server.url)
        output = server.output()

    assert statuses[:2] == [200, 429] and statuses[3] == 429
    assert votes == ["feedback_saved", "rate_limited"]
    assert value(samples, "docent_rate_limit_refusals_total", reason="sockets") == 1
    # The second /api/search, and the chat turn's own search after it: a model's searches
    # count on the visitor's address like /api/search (README, "Security model").
    assert value(samples, "docent_rate_limit_refusals_total", reason="search") == 6
    assert value(samples, "docent_rate_limit_refusals_total", reason="admin_login") == 1
    assert value(samples, "docent_rate_limit_refusals_total", reason="feedback") == 1
    # Nothing said which address: the metric cannot carry it (one series per visitor). One
    # WARNING line per limit and minute names the latest one, however many were refused.
    said = [line for line in output.splitlines() if " ops.refusals: " in line]
    for reason in ("sockets", "search", "admin_login", "feedback"):
        (line,) = [line for line in said if f"rate limit {reason} refused" in line]
        assert " WARNING " in line and "a request from 127.0.0.1" in line
        assert f'docent_rate_limit_refusals_total{{reason="{reason}"}}' in line
    assert len(said) == 4


def _vote_twice(url: str) -> list[str]:
    """One answer from the offline model, then two votes on it from the same session."""
    endings = []
    with httpx.Client(base_url=url, timeout=60, headers={"Origin": url}) as client:
        events = _sse(client, {"content": "What is a mast?"})
        vote = {"type": "feedback", "conversation_id": events[0]["conversation_id"], "turn": 1}
        for choice in ("up", "down"):
            last = _sse(client, {**vote, "vote": choice})[-1]
            endings.append(last["type"] if last["type"] != "error" else last["code"])
    return endings


def _sse(client: httpx.Client, body: dict) -> list[dict]:
    with client.stream("POST", "/api/chat", json=body) as reply:
        return [json.loads(line[5:]) for line in reply.iter_lines() if line.startswith("data:")]


def _postgres_process(data: Path) -> subprocess.Popen:
    """The cluster's `postgres` program, as supervisord starts it (DATABASE_URL names the
    server it keeps; nothing answers there until it has started it)."""
    url = f"postgresql://postgres:@/postgres?host={data}"
    env = {**os.environ, "DATABASE_URL": url, "EMBEDDED_PG_DATA": str(data)}
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", "embedded_postgres"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _postgres_of(data: Path) -> list[int]:
    """The pids of the PostgreSQL servers running on `data` (`ps … postgres -D data`)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["status"] != psutil.STATUS_ZOMBIE and cmdline[1:3] == ["-D", str(data)]:
            found.append(process.pid)
    return found


def _first_line(process: subprocess.Popen) -> str:
    line = process.stdout.readline()
    return line.strip() or process.stdout.read().strip()


@pytest.mark.django_db(transaction=False)
def test_the_clusters_postgres_comes_back_after_postgresql_died(tmp_path):
    """After PostgreSQL died, supervisord restarted the cluster's `postgres` program 20 times and
    gave up: Django's checks asked the database it starts for its version ("cannot reach the
    database"), so `make run WORKERS=N` never had a database again."""
    data = tmp_path / "postgres"
    keeper = _postgres_process(data)
    try:
        assert _first_line(keeper).startswith("PostgreSQL is running (pid ")
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGKILL)  # PostgreSQL dies under it
        assert keeper.wait(timeout=60) != 0  # supervisord starts it again
        keeper = _postgres_process(data)
        assert _first_line(keeper).startswith("PostgreSQL is running (pid ")
    finally:
        keeper.terminate()  # as supervisord stops it
        keeper.wait(timeout=60)
    # The SIGTERM came on the "running" line's heels: the keeper died of it (-15) before its
    # handler was set, or raised it from the line's write (-2), and PostgreSQL ran on, orphaned.
    assert _postgres_of(data) == []


def test_a_postgres_keeper_stopped_while_it_starts_postgresql_leaves_none_running(tmp_path):
    """supervisord stops the cluster (Ctrl-C) while its `postgres` program is still starting
    PostgreSQL: pg_ctl had already started it, in a session of its own, and nothing stopped it."""
    data = tmp_path / "postgres"
    keeper = _postgres_process(data)
    try:
        wait_until(lambda: _postgres_of(data), "pg_ctl started PostgreSQL", seconds=120)
        keeper.terminate()
        keeper.wait(timeout=60)
    finally:
        keeper.kill()
        keeper.wait(timeout=60)

    assert "PostgreSQL is running" not in keeper.stdout.read()  # stopped before it said so
    assert _postgres_of(data) == []


def test_redis_going_down_shows_in_metrics(redis_url, tmp_path):  # noqa: F811
    """With Redis down every chat message failed before its turn started (HTTP 500, a socket
    refused), so no turn counter moved and no metric said why: only /readyz knew."""
    with _server("redis", tmp_path, REDIS_URL=redis_url) as server:
        up = scrape(server.url)
        redis.Redis.from_url(redis_url).shutdown(nosave=True)  # Redis goes away
        down = scrape(server.url)
        ready = httpx.get(f"{server.url}/readyz", timeout=10)

    assert value(up, "docent_redis_up") == 1
    assert ready.status_code == 503 and ready.json()["redis"] is False
    assert ("docent_redis_up", frozenset()) in down and value(down, "docent_redis_up") == 0
    assert value(down, "docent_database_up") == 1  # the database gauges are still there


def test_turns_spooled_in_an_outage_show_until_they_are_replayed(model_server, tmp_path):
    """`docent_turns_spooled_total` said turns had been spooled, and nothing said whether they
    were saved since: the web process replayed its spool without a metric or a log line."""
    gate = asyncio.Event()  # holds the answer until the database is down
    model_server.enqueue(text_response(["Kept ", "for later."], gate=gate))
    env = {**MODEL, "OPENAI_BASE_URL": model_server.base_url, "LOG_FORMAT": "json"}
    with _server("spool", tmp_path, **env) as server:
        asking = threading.Thread(target=ask, args=(server.url, "Keep this"))
        asking.start()
        wait_until(lambda: model_server.requests, "the turn started")
        outage = DatabaseOutage()
        outage.begin()
        try:
            model_server.loop.call_soon_threadsafe(gate.set)
            asking.join(timeout=60)
            spooled = lambda: value(scrape(server.url), "docent_turns_spooled_total") == 1  # noqa: E731
            wait_until(spooled, "the turn was spooled")
            during = scrape(server.url)
        finally:
            outage.end()
            connection.close()
        waiting = lambda: value(scrape(server.url), "docent_turns_spool_waiting") == 0  # noqa: E731
        wait_until(waiting, "the web process replayed its spool", seconds=90)
        output = server.output()

    assert value(during, "docent_database_up") == 0
    assert value(during, "docent_turns_spool_waiting") == 1
    [turn] = Turn.objects.all()
    assert turn.status == "done" and turn.answer == "Kept for later."
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    failed = [line for line in lines if line["message"].startswith("saving turn ")]
    assert failed and all(line["turn_id"] == str(turn.pk) for line in failed)
    replayed = [line for line in lines if line["message"].startswith("spool replayed: ")]
    assert [line["message"] for line in replayed] == [
        "spool replayed: 1 turns saved, 0 still failing"
    ]
    assert "turn_id" not in replayed[0]  # the process's replay, not the turn that started it


def test_a_web_process_whose_event_loop_stalls_shows_its_lag(tmp_path):
    """A web process frozen (SIGSTOP: what CPU starvation, swapping or a blocking call do to
    its one event loop) made every visitor of it wait, and nothing said so: no metric moved
    and no line was logged. Now a neighbour's scrape sees its loop's last tick grow old while
    it is stuck, and its own lag histogram and a WARNING line say how long it was, after."""
    directory = tmp_path / "prometheus"  # what the cluster's processes share
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory), "LOG_FORMAT": "json"}
    with _server("loop-lag", tmp_path, **env) as server:
        wait_until(lambda: _last_ticks(directory), "the lag timer ran")
        os.kill(server.pid, signal.SIGSTOP)
        try:
            stopped = time.time()
            time.sleep(2)
            ticks, read_at = _last_ticks(directory), time.time()  # a neighbour's scrape
        finally:
            os.kill(server.pid, signal.SIGCONT)
        wait_until(lambda: _lag_over(scrape(server.url), 1.0), "the stall was measured")
        output = server.output()
        server.process.kill()  # dead: its series goes, so count() says how many processes live
        server.process.wait()
        multiproc.dead_prune(directory)  # as a neighbour's scrape does
        after_death = _last_ticks(directory)

    [(pid, last_tick)] = ticks.items()
    assert pid == str(server.pid) and last_tick <= stopped and read_at - last_tick >= 2
    assert after_death == {}
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    [blocked] = [line for line in lines if line["message"].startswith("event loop of ")]
    assert blocked["level"] == "WARNING"
    assert blocked["message"].startswith(f"event loop of web process {server.pid} blocked for ")


def _last_ticks(directory: Path) -> dict[str, float]:
    """`docent_event_loop_last_tick_timestamp_seconds` by pid, as any process's scrape adds
    up the shared directory (prometheus-client's multiprocess collector)."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    samples = parse(generate_latest(registry).decode())
    name = "docent_event_loop_last_tick_timestamp_seconds"
    return {dict(labels)["pid"]: got for (key, labels), got in samples.items() if key == name}


def _lag_over(samples: dict, seconds: float) -> bool:
    """Some tick of the loop ran more than `seconds` late."""
    name = "docent_event_loop_lag_seconds"
    return value(samples, f"{name}_count") > value(samples, f"{name}_bucket", le=str(seconds))


def test_the_sites_daily_budget_spent_is_counted_and_said_once(tmp_path):
    """The site's daily budget with less room left than one model call needs: every visitor's
    turn started and was stopped before its call ('This answer reached its token budget'), so
    the budget never reached 0, the refusal at the start never came, and neither the
    `daily_budget` refusal count (DocentDailyBudgetSpent) nor any line in the log moved."""
    env = {"AGENT_TOKENS_PER_DAY": "1", "LOG_FORMAT": "json"}
    with _server("daily-budget", tmp_path, **env) as server:
        ends = [ask(server.url, question)[-1] for question in ("Hello?", "Anyone?")]
        samples = scrape(server.url)
        output = server.output()

    assert [end["code"] for end in ends] == ["rate_limited", "rate_limited"]
    assert value(samples, "docent_rate_limit_refusals_total", reason="daily_budget") == 2
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    [spent] = [line for line in lines if "daily token budget" in line["message"]]
    assert spent["level"] == "WARNING"
    assert spent["message"].startswith("the site's daily token budget (AGENT_TOKENS_PER_DAY=1)")
    # A running turn stopped for want of room, not "spent, every message refused" (ops 21: the
    # next question was answered when one more call fitted).
    assert "had less room left" in spent["message"]
    assert spent["message"].endswith("any turn that needs more than is left until 00:00 UTC")


STATUS_ERROR = 2  # OTLP Status.code


def test_a_turn_the_spool_cannot_take_is_counted_lost(model_server, tmp_path):
    """The database down and the spool unwritable: the turn is lost, and every instrument
    said it was safe (docent_turns_spooled_total 1, 'spooled to None; replayed when the
    database is back', the save span `spooled`), while /metrics answered 500 for as long as
    the spool could not be read. Now the scrape says so before the outage and counts the loss.
    """
    in_the_way = tmp_path / "a-file"  # the spool's mount gone wrong: its path runs into a file
    in_the_way.write_text("")
    gate = asyncio.Event()
    model_server.enqueue(text_response(["Nowhere ", "to go."], gate=gate))
    env = {
        **MODEL,
        "OPENAI_BASE_URL": model_server.base_url,
        "LOG_FORMAT": "json",
        "AGENT_SPOOL_DIR": str(in_the_way / "spool"),
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    with OTLPReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        with _server("spool-unwritable", tmp_path, **env) as server:
            before = scrape(server.url)
            asking = threading.Thread(target=ask, args=(server.url, "Keep this"))
            asking.start()
            wait_until(lambda: model_server.requests, "the turn started")
            outage = DatabaseOutage()
            outage.begin()
            try:
                model_server.loop.call_soon_threadsafe(gate.set)
                asking.join(timeout=60)
                spans = receiver.wait_for(lambda got: "save_turn" in _names(got), timeout=60)
                during = scrape(server.url)
            finally:
                outage.end()
                connection.close()
            output = server.output()

    assert value(before, "docent_spool_writable") == 0
    assert value(during, "docent_turns_lost_total") == 1
    assert value(during, "docent_turns_spooled_total") == 0
    assert ("docent_turns_spool_waiting", frozenset()) not in during
    [save] = [span for span in spans if span["name"] == "save_turn"]
    assert save["attributes"]["error.type"] == "lost" and save["status"] == STATUS_ERROR
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert not [line for line in lines if " spooled to " in line["message"]]
    [lost] = [
        line
        for line in lines
        if line["message"].startswith("turn ") and " lost: " in line["message"]
    ]
    assert lost["level"] == "ERROR" and lost["turn_id"] == save["attributes"]["docent.turn.id"]


def test_a_failing_tool_is_told_from_a_model_mistake(model_server, tmp_path):
    """A tool timing out (ours: a slow database or embedder) and the model sending bad
    arguments (its own) were both `outcome="error"` on the metric and `error.type=error` on
    the span: an alert on failing tools fired for a model that guessed ids."""
    calls = [
        ("c1", "list_articles", "{}"),
        ("c2", "get_article_detail", '{"article_id": "the first one"}'),
    ]
    model_server.enqueue(tool_call_response(calls), text_response(["Nothing."]))
    env = {
        **MODEL,
        "OPENAI_BASE_URL": model_server.base_url,
        "AGENT_TOOL_TIMEOUT": "0.000001",  # no database answers that fast: list_articles times out
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "LOG_FORMAT": "json",
    }
    with OTLPReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        with _server("tools-failing", tmp_path, **env) as server:
            ask(server.url, "What is new?")
            spans = receiver.wait_for(lambda got: "invoke_agent docent" in _names(got))
            samples = scrape(server.url)
            output = server.output()

    tool_calls = "docent_tool_calls_total"
    assert value(samples, tool_calls, tool="list_articles", outcome="timeout") == 1
    assert value(samples, tool_calls, tool="get_article_detail", outcome="invalid_arguments") == 1
    tools = {span["name"]: span for span in spans if span["name"].startswith("execute_tool ")}
    for name, reason in (("list_articles", "timeout"), ("get_article_detail", "invalid_arguments")):
        span = tools[f"execute_tool {name}"]
        assert span["attributes"]["error.type"] == reason and span["status"] == STATUS_ERROR
    [root] = [span for span in spans if not span["parent_id"]]
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    failed = [line for line in lines if line["message"].startswith("tool ")]
    assert {line["message"].split(" after ")[0] for line in failed} == {
        "tool list_articles failed (timeout)",
        "tool get_article_detail failed (invalid_arguments)",
    }
    for line in failed:
        assert line["level"] == "WARNING" and line["trace_id"] == root["trace_id"]
        assert line["turn_id"] == root["attributes"]["docent.turn.id"]
        assert line["conversation_id"] == root["attributes"]["gen_ai.conversation.id"]


def _names(spans: list[dict]) -> list[str]:
    return [span["name"] for span in spans]


def test_a_killed_web_process_shows_on_the_task_workers_own_metrics(tmp_path):
    """Turns of a killed web process are recovered by the task worker, and only its process
    counted them: deployed on its own (a pod, a VM) it shared no metrics directory with a web
    process and served none, so docent_turns_recovered_total never moved and DocentWorkersDying
    could not fire."""
    from agent.models import WorkerLease
    from tests.agent.test_checkpoints import started_turn

    _queue_empty("index")  # other tests' indexing jobs would load the embedding model
    long_ago = timezone.now() - timedelta(minutes=5)
    turn = started_turn("Cut off?")  # its web process was killed mid-answer
    Turn.objects.filter(pk=turn.pk).update(started_at=long_ago, worker="killed-web")
    WorkerLease.objects.create(name="killed-web", renewed_at=long_ago)
    port = free_port()
    access = {"METRICS_ALLOWED_NETWORKS": "10.0.0.0/8", "METRICS_TOKEN": "worker-token"}
    worker = _manage("worker", WORKER_METRICS_PORT=str(port), **access)
    url = f"http://127.0.0.1:{port}/metrics"
    try:

        def recovered() -> bool:
            reply = _get(url, Authorization="Bearer worker-token")
            return reply is not None and "docent_turns_recovered_total 1.0" in reply.text

        wait_until(recovered, "the worker recovered the turn and counted it", seconds=120)
        samples = parse(_get(url, Authorization="Bearer worker-token").text)
        refused = _get(url)  # loopback is not in the allowed networks here
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    assert Turn.objects.get(pk=turn.pk).status == "interrupted"
    assert value(samples, "docent_turns_total", status="interrupted") == 1
    assert refused.status_code == 403


def _get(url: str, **headers: str) -> httpx.Response | None:
    try:
        return httpx.get(url, headers=headers, timeout=10)
    except httpx.TransportError:  # not listening yet
        return None


def test_a_web_process_restarted_during_a_database_outage_waits_for_it(tmp_path):
    """A web process that died while PostgreSQL was down was restarted into Django's checks,
    which ask the database its version: it exited at once ("cannot reach the database")
    instead of waiting for it, and after 20 quick restarts supervisord gave up on it."""
    server = _server("started-in-an-outage", tmp_path)
    outage = DatabaseOutage()
    outage.begin()
    try:
        starting = threading.Thread(target=server.start)
        starting.start()

        def waiting_or_gone() -> bool:
            if server.process is None or not server.log_path.exists():
                return False
            return server.process.poll() is not None or "Waiting for the release" in server.output()

        wait_until(waiting_or_gone, "the web process waits for the database or exits")
        exited = server.process.poll()
    finally:
        outage.end()
        connection.close()
    try:
        starting.join(timeout=120)
        assert exited is None, server.output()
        assert httpx.get(f"{server.url}/readyz", timeout=10).status_code == 200
    finally:
        server.stop()
