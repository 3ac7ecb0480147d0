"""A scripted OpenAI-compatible Chat Completions server for tests (stdlib only).

It listens on 127.0.0.1 (random port) in a background thread with its own event loop, so
sync tests, async tests and subprocesses (daphne in browser tests) can all talk to it:

    with ScriptedOpenAIServer() as server:
        server.enqueue(text_response(["Hel", "lo"]))
        model = OpenAICompatModel(base_url=server.base_url, api_key="", model="scripted")
        ...
        assert server.requests[0]["messages"][-1]["content"] == "Hi"

`POST /v1/chat/completions` with `"stream": true` answers with real SSE (`data: {...}`
frames ending in `data: [DONE]`) using HTTP/1.1 chunked encoding, one queued response per
request. `disconnected` is set when a client closes the connection before its script ended.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_EOF_WAIT = 30.0  # how long a hanging response waits for the client to go away


@dataclass
class ScriptedResponse:
    """One queued answer: an HTTP error, or SSE chunks with optional delays and a hang."""

    status: int = 200
    chunks: list[dict] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    error_body: dict | None = None
    delay: float = 0.0  # seconds before each chunk
    hang_after: int | None = None  # stop after this many chunks and wait for a disconnect
    drop_after: int | None = None  # cut the connection after this many chunks (a crash)


def _chunk(delta: dict | None = None, finish: str | None = None, **extra: Any) -> dict:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": choices,
        **extra,
    }


def _usage_chunk(usage: tuple[int, int] | None) -> list[dict]:
    if usage is None:
        return []
    prompt, completion = usage
    totals = {"prompt_tokens": prompt, "completion_tokens": completion}
    return [_chunk(usage={**totals, "total_tokens": prompt + completion})]


def text_response(
    pieces: list[str],
    *,
    usage: tuple[int, int] | None = (10, 5),
    delay: float = 0.0,
    hang_after: int | None = None,
) -> ScriptedResponse:
    """Stream `pieces` as content deltas, then finish_reason stop and (optionally) usage."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": piece}) for piece in pieces]
    chunks += [_chunk({}, finish="stop"), *_usage_chunk(usage)]
    return ScriptedResponse(chunks=chunks, delay=delay, hang_after=hang_after)


def tool_call_response(
    calls: list[tuple[str, str, str]],
    *,
    split: int = 0,
    text: list[str] | None = None,
    usage: tuple[int, int] | None = (10, 5),
    delay: float = 0.0,
) -> ScriptedResponse:
    """Stream (id, name, arguments) calls as the API does: id and name in the first fragment,
    then the arguments in pieces of `split` characters (0: in one piece). `text` pieces, if
    any, stream before the calls."""
    chunks = [_chunk({"role": "assistant", "content": None if text is None else ""})]
    chunks += [_chunk({"content": piece}) for piece in text or []]
    for index, (call_id, name, arguments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        chunks.append(_tool_chunk({**head, "function": {"name": name, "arguments": ""}}))
        size = split or max(len(arguments), 1)
        for start in range(0, len(arguments), size):
            piece = arguments[start : start + size]
            chunks.append(_tool_chunk({"index": index, "function": {"arguments": piece}}))
    chunks += [_chunk({}, finish="tool_calls"), *_usage_chunk(usage)]
    return ScriptedResponse(chunks=chunks, delay=delay)


def _tool_chunk(fragment: dict) -> dict:
    return _chunk({"tool_calls": [fragment]})


def error_response(
    status: int, *, retry_after: float | str | None = None, message: str = "scripted failure"
) -> ScriptedResponse:
    """An HTTP error with an OpenAI-style JSON body and optional Retry-After header."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    body = {"error": {"message": message, "type": "server_error", "code": str(status)}}
    return ScriptedResponse(status=status, headers=headers, error_body=body)


class ScriptedOpenAIServer:
    """Serves queued ScriptedResponses over real HTTP from a background thread."""

    def __init__(self) -> None:
        self.requests: list[dict] = []  # JSON bodies, in arrival order
        self.request_headers: list[dict[str, str]] = []
        self.disconnected = threading.Event()
        self.disconnects = 0
        self._queue: deque[ScriptedResponse] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *responses: ScriptedResponse) -> None:
        self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """Queued responses not served yet."""
        return len(self._queue)

    def start(self) -> ScriptedOpenAIServer:
        self._thread = threading.Thread(target=self._run, name="scripted-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("scripted server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._thread = self._loop = self._server = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Await (from any event loop) until a client dropped a stream early."""
        return await asyncio.to_thread(self.disconnected.wait, timeout)

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; return whether the connection may be reused."""
        request_line = await reader.readline()
        if not request_line:
            return False
        method, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        self.requests.append(json.loads(raw or b"{}"))
        self.request_headers.append(headers)
        if not self._queue:
            await _send_json(writer, 500, {"error": {"message": "scripted server: queue empty"}})
            return True
        response = self._queue.popleft()
        if response.status != 200:
            await _send_json(writer, response.status, response.error_body, response.headers)
            return True
        return await self._stream(reader, writer, response)

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: ScriptedResponse
    ) -> bool:
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            "transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        writer.write(head.encode())
        # The client sends nothing more on this connection, so a finished read means it left.
        eof = asyncio.ensure_future(reader.read(1))
        frames = [json.dumps(chunk) for chunk in response.chunks] + ["[DONE]"]
        sent = 0
        try:
            while sent < len(frames):
                if sent == response.hang_after:
                    await asyncio.wait({eof}, timeout=_EOF_WAIT)
                elif response.delay:
                    await asyncio.wait({eof}, timeout=response.delay)
                if eof.done():
                    break
                if sent == response.drop_after:
                    writer.transport.abort()  # no terminating chunk: the stream breaks off
                    return False
                writer.write(_http_chunk(f"data: {frames[sent]}\n\n".encode()))
                await writer.drain()
                sent += 1
            if sent == len(frames):
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            eof.cancel()
        if sent < len(frames):
            self.disconnects += 1
            self.disconnected.set()
        return False  # streamed responses close the connection (`connection: close`)


def _http_chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    payload = json.dumps(body).encode()
    lines = [f"HTTP/1.1 {status} Scripted", "content-type: application/json"]
    lines += [f"content-length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
    await writer.drain()
