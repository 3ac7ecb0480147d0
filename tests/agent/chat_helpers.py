"""Shared helpers for the chat transport tests: a socket, its events, and the saved turns."""

import asyncio

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from agent.models import Turn
from agent.runner import runner
from config.asgi import application

ORIGIN = (b"origin", b"http://localhost")
HOST = (b"host", b"localhost")


async def connect(*, headers: list[tuple[bytes, bytes]] | None = None) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(application, "/ws/chat/", headers=headers or [ORIGIN, HOST])
    # Not the communicator's default of 1 s: on a busy machine (CI, two test processes on two
    # cores) the handshake's session and rate-limit work took longer, and the test failed.
    connected, _ = await socket.connect(timeout=10)
    assert connected
    return socket


async def turn_events(socket: WebsocketCommunicator, timeout: float = 10) -> list[dict]:
    """Receive events until the turn's terminal `done` or `error`."""
    received = []
    while True:
        event = await socket.receive_json_from(timeout=timeout)
        received.append(event)
        if event["type"] in {"done", "error"}:
            return received


async def ask(socket: WebsocketCommunicator, content: str, **extra) -> list[dict]:
    await socket.send_json_to({"type": "message", "content": content, **extra})
    return await turn_events(socket)


async def saved_turns() -> list[Turn]:
    """The turns in the database once every background save has landed."""
    assert await runner.saver.drain(timeout=10)
    # database_sync_to_async closes the thread's connection, so the test database can be dropped.
    return await database_sync_to_async(
        lambda: list(Turn.objects.order_by("started_at").prefetch_related("tool_calls"))
    )()


def types(events: list[dict]) -> list[str]:
    return [event["type"] for event in events]


def shape(events: list[dict]) -> list[str]:
    """The event types with each run of `text` frames as one: how deltas are framed varies."""
    out: list[str] = []
    for kind in types(events):
        if not (kind == "text" and out and out[-1] == "text"):
            out.append(kind)
    return out


def text_of(events: list[dict]) -> str:
    return "".join(event["content"] for event in events if event["type"] == "text")


async def wait_until(predicate, timeout: float = 5.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.01)
    return predicate()
