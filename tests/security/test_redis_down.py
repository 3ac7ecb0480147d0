"""Redis (the shared limits, budgets and turn locks) down: a typed `unavailable`, never a 500.

Before, `POST /api/chat` answered a 500 page and the WebSocket handshake a 500, so the panel
showed its generic failure; a vote's stream broke. Now nothing can be counted, so no turn
starts (the limits fail closed), and every transport says `unavailable`: the panel reconnects
and offers to ask the kept question again.
"""

import asyncio
import json

import httpx
import pytest
import redis
from django.db import connection

from agent.models import Turn
from testing_support.live_server import LiveServer, database_url
from tests.ops.prom import scrape, value
from tests.security.clients import ws_events, ws_open
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db(transaction=True)


def _server(tmp_path, url: str) -> LiveServer:
    database = database_url(connection.settings_dict["NAME"])
    return LiveServer("redis-down", database, {"REDIS_URL": url}, tmp_path / "server")


def _post(url: str, body: dict, cookies: dict | None = None) -> tuple[int, list[dict]]:
    with httpx.Client(base_url=url, timeout=30, cookies=cookies or {}) as client:
        response = client.post("/api/chat", json=body, headers={"Origin": url})
    lines = response.text.splitlines()
    return response.status_code, [json.loads(line[5:]) for line in lines if line[:5] == "data:"]


async def _over_the_socket(server: LiveServer, cookie: str | None = None) -> list[dict]:
    async with await ws_open(server, cookie=cookie) as socket:
        await socket.send(json.dumps({"type": "message", "content": "What is HNSW?"}))
        return await ws_events(socket)


def test_every_transport_says_unavailable_while_redis_is_down(redis_url, tmp_path):  # noqa: F811
    with _server(tmp_path, redis_url) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:  # Redis up: a turn
            client.post(
                "/api/chat", json={"content": "What is HNSW?"}, headers={"Origin": server.url}
            )
            cookie = client.cookies.get("sessionid")
        before = Turn.objects.count()
        redis.Redis.from_url(redis_url).shutdown(nosave=True)  # Redis goes away

        new_status, new_visitor = _post(server.url, {"content": "What is HNSW?"})
        known_status, known_visitor = _post(
            server.url, {"content": "What is HNSW?"}, {"sessionid": cookie}
        )
        socket_new = asyncio.run(_over_the_socket(server))
        socket_known = asyncio.run(_over_the_socket(server, cookie))
        vote_status, vote = _post(
            server.url,
            {
                "type": "feedback",
                "conversation_id": str(Turn.objects.get().conversation_id),
                "turn": 1,
                "vote": "up",
            },
            {"sessionid": cookie},
        )
        refused = value(scrape(server.url), "docent_turns_refused_total", reason="shared_state")
        output = server.output()

    assert before == 1
    assert new_status == known_status == vote_status == 200
    for events in (new_visitor, known_visitor, socket_new, socket_known):
        [error] = events  # refused before `start`: no turn
        assert error["type"] == "error" and error["code"] == "unavailable"
        assert "ask again" in error["message"]
    assert vote[-1]["code"] == "unavailable" and vote[-1]["feedback"] is True
    assert Turn.objects.count() == 1  # nothing started, nothing half-saved
    assert refused == 4
    assert "Internal Server Error" not in output and "Traceback" not in output
    # Said once (every 10 s at most), with what it stops and what to do; it was one line per
    # request, so the visitors decided how fast the log grew during the outage.
    said = [line for line in output.splitlines() if " agent.shared: " in line]
    unreachable = [line for line in said if "is unreachable" in line]
    assert 1 <= len(unreachable) < 5  # five requests failed (each said it: five or more)
    assert "WARNING agent.shared: the shared state (Redis) is unreachable: " in unreachable[0]
    assert "are refused until it answers: start it, or check REDIS_URL" in unreachable[0]


def test_a_turn_running_when_redis_goes_down_finishes_and_is_saved(
    redis_url,  # noqa: F811
    tmp_path,
):
    from testing_support.model_server import ScriptedOpenAIServer, text_response

    with ScriptedOpenAIServer() as model:
        gate = asyncio.Event()  # holds the answer until Redis is gone
        model.enqueue(text_response(["Half ", "and the rest."], gate=gate))
        database = database_url(connection.settings_dict["NAME"])
        env = {
            "REDIS_URL": redis_url,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "test",
            "AGENT_MODEL": "scripted",
        }
        with LiveServer("redis-mid", database, env, tmp_path / "server") as server:

            async def turn() -> list[dict]:
                async with await ws_open(server) as socket:
                    await socket.send(json.dumps({"type": "message", "content": "Tell me"}))
                    first = json.loads(await socket.recv())
                    redis.Redis.from_url(redis_url).shutdown(nosave=True)
                    model.loop.call_soon_threadsafe(gate.set)
                    return [first, *await ws_events(socket)]

            events = asyncio.run(turn())
            output = server.output()

    assert events[0]["type"] == "start" and events[-1]["type"] == "done"
    assert "".join(e["content"] for e in events if e["type"] == "text") == "Half and the rest."
    [saved] = Turn.objects.all()
    assert saved.status == "done" and saved.answer == "Half and the rest."
    assert "Traceback" not in output, output


def test_a_long_answer_that_needs_more_budget_while_redis_is_down_ends_unavailable(
    redis_url,  # noqa: F811
    tmp_path,
):
    # The budget is asked again as a long answer outgrows what it granted; with Redis gone
    # that ended the turn `internal` with a traceback ("agent turn failed").
    from testing_support.model_server import ScriptedOpenAIServer, text_response

    with ScriptedOpenAIServer() as model:
        gate = asyncio.Event()  # holds the answer until Redis is gone
        model.enqueue(text_response(["many words " * 400] * 8, gate=gate))  # ~9,000 tokens
        database = database_url(connection.settings_dict["NAME"])
        env = {
            "REDIS_URL": redis_url,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "test",
            "AGENT_MODEL": "scripted",
        }
        with LiveServer("redis-long", database, env, tmp_path / "server") as server:

            async def turn() -> list[dict]:
                async with await ws_open(server) as socket:
                    await socket.send(json.dumps({"type": "message", "content": "Tell me"}))
                    first = json.loads(await socket.recv())
                    redis.Redis.from_url(redis_url).shutdown(nosave=True)
                    model.loop.call_soon_threadsafe(gate.set)
                    return [first, *await ws_events(socket, timeout=60)]

            events = asyncio.run(turn())
            output = server.output()

    assert events[0]["type"] == "start"
    assert events[-1]["type"] == "error" and events[-1]["code"] == "unavailable"
    shown = "".join(e["content"] for e in events if e["type"] == "text")
    [saved] = Turn.objects.all()
    assert (saved.status, saved.error_code) == ("error", "unavailable")
    assert saved.answer == shown  # what the visitor read is kept
    assert "Traceback" not in output, output


def test_http_reads_and_posts_that_count_on_redis_answer_503_while_it_is_down(
    redis_url,  # noqa: F811
    tmp_path,
):
    # The chat said `unavailable`, but the other requests that count on Redis before they act
    # (a search, a transcript read, a vote over the REST route, an admin sign-in) were a 500
    # with a traceback at ERROR each: any client wrote 80 lines of the error log per request
    # for as long as Redis was away. Still refused (nothing can be counted), now as a 503.
    with _server(tmp_path, redis_url) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:  # Redis up: a turn
            client.post(
                "/api/chat", json={"content": "What is HNSW?"}, headers={"Origin": server.url}
            )
            cookie = client.cookies.get("sessionid")
        conversation = Turn.objects.get().conversation_id
        redis.Redis.from_url(redis_url).shutdown(nosave=True)  # Redis goes away

        with httpx.Client(base_url=server.url, timeout=30, cookies={"sessionid": cookie}) as c:
            answers = [
                c.get("/api/search", params={"q": "hnsw"}),
                c.get(f"/api/conversations/{conversation}"),
                c.post(
                    f"/api/conversations/{conversation}/turns/1/feedback",
                    json={"vote": "up"},
                    headers={"Origin": server.url},
                ),
                c.post("/admin/login/", data={"username": "editor", "password": "guess"}),
            ]
        output = server.output()

    assert [answer.status_code for answer in answers] == [503, 503, 503, 503]
    assert all(answer.headers["Retry-After"] == "5" for answer in answers)
    assert answers[0].json()["code"] == "unavailable"
    assert "Internal Server Error" not in output and "Traceback" not in output
    assert Turn.objects.get().vote == ""  # the vote was not saved uncounted
