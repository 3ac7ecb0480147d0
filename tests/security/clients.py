"""What an attacker uses: real WebSocket and HTTP clients against a live server."""

import base64
import json
import os
import socket

import httpx
from channels.db import database_sync_to_async
from django.db import connection
from websockets.asyncio.client import ClientConnection, connect

from testing_support.live_server import LiveServer


def server_connections() -> int:
    """The database's connections now, the caller's own left out (a live server's, mostly)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def published_indexed(**fields) -> None:
    """A published article, chunked and embedded with the configured embedder (sync)."""
    from blog.embeddings import embedder_get
    from blog.indexing import chunk_reindex
    from blog.models import Article

    article = Article.objects.create(status=Article.Status.PUBLISHED, **fields)
    chunk_reindex(article=Article.objects.get(pk=article.pk), embedder=embedder_get())


async def ws_answer(server: LiveServer, question: str, **extra) -> list[dict]:
    """One question on a socket of its own: the turn's events, the socket closed after."""
    socket = await ws_open(server)
    try:
        return await ws_ask(socket, question, **extra)
    finally:
        await socket.close()


def same_minute(seconds_needed: float = 20) -> None:
    """Wait, if needed, so the next `seconds_needed` fall in one per-minute rate window.

    The message limits count in fixed minute windows: a burst across a boundary is two bursts.
    """
    import time

    into = time.time() % 60
    if into > 60 - seconds_needed:
        time.sleep(60 - into + 0.2)


def ws_url(server: LiveServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws/chat/"


async def ws_open(
    server: LiveServer,
    *,
    origin: str | None = "same",
    headers: dict[str, str] | None = None,
    cookie: str | None = None,
) -> ClientConnection:
    """Open the chat socket; `origin="same"` sends the server's own origin, None sends none."""
    extra = dict(headers or {})
    if cookie:
        extra["Cookie"] = f"sessionid={cookie}"
    if origin == "same":
        origin = server.url
    if origin is not None:
        extra["Origin"] = origin
    return await connect(ws_url(server), additional_headers=extra, compression=None)


async def ws_events(socket: ClientConnection, timeout: float = 20) -> list[dict]:
    """Events until the turn's `done` or `error`."""
    received = []
    while True:
        event = json.loads(await _recv(socket, timeout))
        received.append(event)
        if event["type"] in {"done", "error"}:
            return received


async def ws_ask(socket: ClientConnection, content: str, **extra) -> list[dict]:
    await socket.send(json.dumps({"type": "message", "content": content, **extra}))
    return await ws_events(socket)


async def ws_first(socket: ClientConnection, timeout: float = 20) -> dict:
    return json.loads(await _recv(socket, timeout))


async def _recv(socket: ClientConnection, timeout: float) -> str:
    import asyncio

    return await asyncio.wait_for(socket.recv(), timeout)


def sse_post(
    server: LiveServer,
    body: bytes | str | dict,
    *,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    origin: str | None = "same",
) -> tuple[httpx.Response, list[dict]]:
    """POST /api/chat and read the whole stream; the events (empty unless it streamed)."""
    sent = {"Content-Type": "application/json"}
    if origin is not None:
        sent["Origin"] = server.url if origin == "same" else origin
    sent.update(headers or {})
    content = json.dumps(body) if isinstance(body, dict) else body
    with httpx.Client(base_url=server.url, timeout=30, cookies=cookies) as client:
        response = client.post("/api/chat", content=content, headers=sent)
    events = []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for frame in response.text.split("\n\n"):
            if frame.startswith("data: "):
                events.append(json.loads(frame.removeprefix("data: ")))
    return response, events


@database_sync_to_async
def rows(model_path: str) -> int:
    """How many rows a model has, e.g. rows("agent.Conversation")."""
    from django.apps import apps

    return apps.get_model(model_path).objects.count()


def rows_now(model_path: str) -> int:
    from django.apps import apps

    return apps.get_model(model_path).objects.count()


@database_sync_to_async
def session_keys() -> list[str]:
    from django.contrib.sessions.models import Session

    return list(Session.objects.values_list("session_key", flat=True))


def admin_signed_in(server: LiveServer, *, username: str, password: str) -> httpx.Client:
    """A client signed in to the admin through its real sign-in form (the user must exist)."""
    client = httpx.Client(base_url=server.url, follow_redirects=False)
    token = client.get("/admin/login/").cookies["csrftoken"]
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
    referer = {"Referer": server.url + "/admin/login/"}
    answer = client.post("/admin/login/", data=form, headers=referer)
    assert answer.status_code == 302, answer.status_code
    return client


def masked_text_frame(payload: bytes) -> bytes:
    """A client's text frame as the wire carries it (masked, shorter than 126 bytes)."""
    return masked_frame(payload)


def masked_frame(payload: bytes = b"", *, opcode: int = 0x1, fin: bool = True) -> bytes:
    """Any client frame (0x0 continuation, 0x1 text, 0x9 ping, 0xA pong), under 126 bytes."""
    mask = os.urandom(4)
    body = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | len(payload)]) + mask + body


def ws_open_raw(port: int, *, receive_buffer: int = 0) -> socket.socket:
    """The chat socket over a bare TCP connection, for frames no client library sends.

    `receive_buffer`: the kernel's buffer for what the server sends, in bytes (a slow link;
    0: the kernel's own, which grows as needed)."""
    raw = socket.socket()
    if receive_buffer:  # before connecting: the window is agreed in the handshake
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.settimeout(60)
    raw.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        (
            f"GET /ws/chat/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://127.0.0.1:{port}\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += raw.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return raw


def frame_length(buffer: bytes) -> int:
    """The length of the server frame at the start of `buffer` (huge until its header is in)."""
    size = buffer[1] & 0x7F
    if size == 126:
        return 4 + int.from_bytes(buffer[2:4]) if len(buffer) >= 4 else 1 << 30
    if size == 127:
        return 10 + int.from_bytes(buffer[2:10]) if len(buffer) >= 10 else 1 << 30
    return 2 + size


IP_FREEBIND = 15  # linux/in.h: bind an address no interface holds (routed here, not assigned)


def connect_from(address: str, port: int) -> socket.socket | None:
    """A TCP connection to ::1 from `address` (in conftest's routed_network), or None."""
    sock = socket.socket(socket.AF_INET6)
    sock.setsockopt(socket.IPPROTO_IP, IP_FREEBIND, 1)
    sock.bind((address, 0))
    sock.settimeout(5)
    try:
        sock.connect(("::1", port))
    except OSError:
        sock.close()
        return None
    return sock
