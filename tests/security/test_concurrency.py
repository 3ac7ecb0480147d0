"""Finding 5c and the per-IP token cap: one visitor cannot run many turns or take the budget."""

import asyncio

import httpx
import pytest

from testing_support.model_server import text_response
from tests.security.clients import sse_post, ws_ask, ws_events, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


def slow(count: int) -> list:
    return [text_response(["word "] * 40, delay=0.05) for _ in range(count)]


def page_cookie(server) -> str:
    with httpx.Client(base_url=server.url) as client:
        return client.get("/").cookies["sessionid"]


async def first_events(sockets, content: str = "go") -> list[dict]:
    for socket in sockets:
        await socket.send(f'{{"type":"message","content":"{content}"}}')
    return list(await asyncio.gather(*(ws_first(socket) for socket in sockets)))


async def test_one_session_runs_at_most_two_turns_across_its_sockets(serve, scripted):
    scripted.enqueue(*slow(6))
    server = serve("session-turns", **model_env(scripted))
    key = page_cookie(server)
    sockets = [await ws_open(server, cookie=key) for _ in range(6)]

    first = await first_events(sockets)

    kinds = sorted(event.get("code", event["type"]) for event in first)
    assert kinds == ["busy"] * 4 + ["start"] * 2
    for socket, event in zip(sockets, first, strict=True):
        if event["type"] == "start":
            await ws_events(socket)
    # Slots come back when turns end: the session can ask again.
    assert (await ws_ask(sockets[0], "again"))[0]["type"] == "start"
    for socket in sockets:
        await socket.close()


async def test_one_conversation_runs_one_turn_across_websocket_and_sse(serve, scripted):
    scripted.enqueue(*slow(2))
    server = serve("conversation-turns", **model_env(scripted))
    key = page_cookie(server)
    socket = await ws_open(server, cookie=key)
    opened = await ws_ask(socket, "first")
    conversation = opened[0]["conversation_id"]

    await socket.send(f'{{"type":"message","content":"second","conversation_id":"{conversation}"}}')
    assert (await ws_first(socket))["type"] == "start"
    _, other_tab = await asyncio.to_thread(
        sse_post,
        server,
        {"content": "in parallel", "conversation_id": conversation},
        cookies={"sessionid": key},
    )

    assert [(e["type"], e.get("code")) for e in other_tab] == [("error", "busy")]
    assert (await ws_events(socket))[-1]["type"] == "done"
    await socket.close()


async def test_one_address_cannot_spend_the_whole_daily_budget(serve, scripted):
    # 2,500 tokens a turn (the scripted usage), 5,000 a day per address: the third turn is
    # refused, while another visitor (another address, through the trusted proxy) is answered.
    # (A turn must hold about 2,000 before its call: the prompt and an answer's allowance.)
    scripted.enqueue(*[text_response(["ok"], usage=(2000, 500)) for _ in range(3)])
    server = serve(
        "ip-budget",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_TOKENS_PER_IP_PER_DAY="5000",
        **model_env(scripted),
    )
    greedy = {"X-Forwarded-For": "203.0.113.66"}

    turns = []
    for _ in range(3):
        socket = await ws_open(server, headers=greedy)  # a new session each time
        turns.append(await ws_ask(socket, "spend"))
        await socket.close()
    socket = await ws_open(server, headers={"X-Forwarded-For": "203.0.113.77"})
    someone_else = await ws_ask(socket, "hello")
    await socket.close()

    assert [t[-1]["type"] for t in turns] == ["done", "done", "error"]
    assert turns[2][0]["code"] == "rate_limited"
    assert "You have used today’s budget" in turns[2][0]["message"]
    assert someone_else[-1]["type"] == "done"
