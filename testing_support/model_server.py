"""A scripted OpenAI-compatible Chat Completions server, for the tests and the benches.

    with ScriptedOpenAIServer() as server:          # its own thread and event loop
        server.enqueue(text_response(["Hel", "lo"]))
        model = OpenAICompatModel(base_url=server.base_url, api_key="", model="scripted")
        ...
        assert server.requests[0]["messages"][-1]["content"] == "Hi"

`POST /v1/chat/completions` with `"stream": true` answers with real SSE (`data: {...}` frames
ending in `data: [DONE]`) over HTTP/1.1 chunked encoding. Each request takes the next queued
response, or, when the server was made with `script_for`, the response that function picks for
the last user message (the benches key every stream that way). `streams[key]` records when each
content chunk was written and whether the client closed the connection early.

One ticker writes every due chunk, so 1,000 concurrent streams at 50 tokens/s cost one
wake-up per millisecond, not one timer per token. Run the server in its own thread (`start()`,
a context manager) or in the caller's event loop (`await astart()`); loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

_EOF_WAIT = 30.0  # how long a hanging response waits for the client to go away
TICK = 0.001  # the ticker's resolution, seconds: due chunks are written in batches


@dataclass
class ScriptedResponse:
    """One answer: an HTTP error, or SSE chunks, paced by the delays below.

    `delay` comes before each content or tool-call chunk (the others go out with their
    neighbour), the first one after `phase + first_delay`; `gate` (an asyncio.Event of the
    server's loop) holds the first chunk until set. `hang_after` stops after that many chunks
    until the client leaves, `drop_after` cuts the connection there (a crash); `hang_up`
    cuts it once the request is read, before any answer (an endpoint that died on it).
    """

    status: int = 200
    chunks: list[Any] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    error_body: dict | None = None
    delay: float = 0.0
    first_delay: float = 0.0
    phase: float = 0.0
    gate: asyncio.Event | None = None
    hang_after: int | None = None
    drop_after: int | None = None
    hang_up: bool = False


@dataclass(frozen=True)
class Comment:
    """An SSE comment line (": ping"), as proxies and routers send to keep a stream alive:
    a chunk of `ScriptedResponse.chunks` like the others, paced by `delay`."""

    text: str = "ping"


@dataclass
class Stream:
    """What the server saw of one streamed answer (`time.monotonic()` seconds)."""

    key: str
    requested_at: float
    first_content_at: float | None = None
    last_content_at: float | None = None
    finished_at: float | None = None
    client_closed_at: float | None = None  # EOF seen while the answer was still open
    writes: list[float] = field(default_factory=list)  # when each content chunk was written


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
    hold: bool = False,
    **pacing: Any,
) -> ScriptedResponse:
    """Stream `pieces` as content deltas, then finish_reason stop and (optionally) usage.

    `hold` keeps the stream open after the pieces until the client leaves; `pacing` takes
    ScriptedResponse's delay, first_delay, phase, gate and hang_after.
    """
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": piece}) for piece in pieces]
    chunks += [_chunk({}, finish="stop"), *_usage_chunk(usage)]
    if hold:
        pacing["hang_after"] = len(pieces) + 1
    return ScriptedResponse(chunks=chunks, **pacing)


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


def raw_response(
    deltas: list[dict], *, usage: Any = None, finish: str = "stop"
) -> ScriptedResponse:
    """Stream each delta exactly as given (whatever shape an endpoint might send), then
    `finish`, then `usage` as given when it is not None (the security tests' odd endpoints)."""
    chunks = [_chunk(delta) for delta in deltas] + [_chunk({}, finish=finish)]
    if usage is not None:
        chunks.append(_chunk(usage=usage))
    return ScriptedResponse(chunks=chunks)


def _tool_chunk(fragment: dict) -> dict:
    return _chunk({"tool_calls": [fragment]})


def error_response(
    status: int, *, retry_after: float | str | None = None, message: str = "scripted failure"
) -> ScriptedResponse:
    """An HTTP error with an OpenAI-style JSON body and optional Retry-After header."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    body = {"error": {"message": message, "type": "server_error", "code": str(status)}}
    return ScriptedResponse(status=status, headers=headers, error_body=body)


def _paced(chunk: Any) -> bool:
    """Content and tool-call chunks wait for their delay; role, finish and usage do not."""
    if not isinstance(chunk, dict):
        return True
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("tool_calls"):
            return True
    return False


def _has_content(chunk: Any) -> bool:
    return isinstance(chunk, dict) and any(
        (choice.get("delta") or {}).get("content") for choice in chunk.get("choices") or []
    )


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
)
DONE = _http_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"


@dataclass(order=True)
class _Due:
    at: float
    seq: int
    run: _Run = field(compare=False)


@dataclass
class _Run:
    """One streaming response in progress."""

    stream: Stream
    response: ScriptedResponse
    frames: list[bytes]
    paced: list[bool]
    content: list[bool]
    writer: asyncio.StreamWriter
    finished: asyncio.Future
    sent: int = 0
    hung: bool = False  # hang_after reached once; after _EOF_WAIT the stream goes on


class ScriptedOpenAIServer:
    """Serves ScriptedResponses over real HTTP: queued in order, or picked by `script_for`."""

    def __init__(self, script_for: Callable[[str], ScriptedResponse] | None = None) -> None:
        self.script_for = script_for
        # `GET /v1/models` lists these; with `api_key` set, any other key is refused (401).
        self.models: list[str] = ["scripted"]
        self.api_key: str | None = None
        self.requests: list[dict] = []  # JSON bodies, in arrival order
        self.request_headers: list[dict[str, str]] = []
        self.streams: dict[str, Stream] = {}
        self.errors: list[str] = []
        self.disconnected = threading.Event()
        self.disconnects = 0
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._queue: deque[ScriptedResponse] = deque()
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._due: list[_Due] = []
        self._seq = 0
        self._wake: asyncio.Event | None = None
        self._ticker: asyncio.Task | None = None
        self._encoded: dict[int, tuple[Any, bytes]] = {}  # id(chunk) -> (chunk, SSE bytes)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *responses: ScriptedResponse) -> None:
        self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """Queued responses not served yet."""
        return len(self._queue)

    def reset(self) -> None:
        """Forget queued responses and recorded requests (a package-scoped server's tests)."""
        self._queue.clear()
        self.requests.clear()
        self.request_headers.clear()

    # --- running it ---

    async def astart(self) -> ScriptedOpenAIServer:
        """Serve from the running event loop."""
        self.loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ticker = asyncio.create_task(self._tick())
        return self

    async def astop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self._server is not None:
            self._server.close()

    def start(self) -> ScriptedOpenAIServer:
        """Serve from a background thread with its own event loop."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.run_until_complete(self.astart())
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.astop())
                for task in asyncio.all_tasks(loop):
                    task.cancel()
                loop.run_until_complete(asyncio.sleep(0.01))
                loop.close()

        self._thread = threading.Thread(target=run, name="scripted-openai", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("scripted server did not start")
        return self

    def stop(self) -> None:
        if self.loop is not None and self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Await (from any event loop) until a client dropped a stream early."""
        return await asyncio.to_thread(self.disconnected.wait, timeout)

    # --- HTTP ---

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
            self.errors.append(repr(exc))
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
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            refusal = {"message": "Incorrect API key provided.", "code": "invalid_api_key"}
            await _send_json(writer, 401, {"error": refusal})
            return True
        if method == "GET" and path.rstrip("/") == "/v1/models":
            listed = [{"id": name, "object": "model"} for name in self.models]
            await _send_json(writer, 200, {"object": "list", "data": listed})
            return True
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        body = orjson.loads(raw or b"{}")
        self.requests.append(body)
        self.request_headers.append(headers)
        key = _last_user_message(body)
        if self.script_for is not None:
            response = self.script_for(key)
        elif self._queue:
            response = self._queue.popleft()
        else:
            await _send_json(writer, 500, {"error": {"message": "scripted server: queue empty"}})
            return True
        if response.hang_up:
            writer.transport.abort()
            return False
        if response.status != 200:
            await _send_json(writer, response.status, response.error_body, response.headers)
            return True
        await self._stream(key, reader, writer, response)
        return False  # streamed responses close the connection (`connection: close`)

    async def _stream(
        self,
        key: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        response: ScriptedResponse,
    ) -> None:
        stream = self.streams[key] = Stream(key=key, requested_at=time.monotonic())
        chunks = response.chunks
        run = _Run(
            stream=stream,
            response=response,
            frames=[self._encode(chunk) for chunk in chunks],
            paced=[_paced(chunk) for chunk in chunks],
            content=[_has_content(chunk) for chunk in chunks],
            writer=writer,
            finished=asyncio.get_running_loop().create_future(),
        )
        writer.write(HEAD)
        # The client sends nothing more, so a finished read means it closed the stream.
        eof = asyncio.ensure_future(reader.read(1))
        eof.add_done_callback(lambda _: self._closed(run))
        try:
            if response.gate is not None:
                await response.gate.wait()
            self._advance(run, time.monotonic() + response.phase + response.first_delay)
            await run.finished
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            eof.cancel()
        if stream.finished_at is None:
            self.disconnects += 1
            self.disconnected.set()

    def _closed(self, run: _Run) -> None:
        if not run.finished.done():
            run.stream.client_closed_at = time.monotonic()
            run.finished.set_result(None)

    def _encode(self, chunk: Any) -> bytes:
        """SSE bytes of a chunk, cached: the benches send the same chunk thousands of times."""
        if isinstance(chunk, Comment):
            return _http_chunk(b": " + chunk.text.encode() + b"\n\n")
        cached = self._encoded.get(id(chunk))
        if cached is None or cached[0] is not chunk:
            data = _http_chunk(b"data: " + _dumps(chunk) + b"\n\n")
            cached = self._encoded[id(chunk)] = (chunk, data)
        return cached[1]

    # --- pacing ---

    def _advance(self, run: _Run, due: float) -> None:
        """Write the frames due at `due` and every unpaced one after them; schedule the next."""
        if run.finished.done() or run.writer.is_closing():
            return
        response, stream = run.response, run.stream
        now = time.monotonic()
        paced_written = False
        out = []
        while run.sent < len(run.frames):
            index = run.sent
            if index == response.hang_after and not run.hung:
                run.hung = True
                return self._write(run, out, now, now + _EOF_WAIT)
            if index == response.drop_after:
                run.writer.write(b"".join(out))
                run.writer.transport.abort()  # no terminating chunk: the stream breaks off
                stream.finished_at = now  # ended by the script, not by the client
                run.finished.set_result(None)
                return None
            if run.paced[index]:
                if due > now or (paced_written and response.delay > 0):
                    return self._write(run, out, now, due + response.delay * paced_written)
                paced_written = True
            out.append(run.frames[index])
            if run.content[index]:
                stream.writes.append(now)
            run.sent += 1
        out.append(DONE)
        stream.finished_at = now
        self._write(run, out, now, None)
        run.finished.set_result(None)
        return None

    def _write(self, run: _Run, out: list[bytes], now: float, next_due: float | None) -> None:
        if out:
            run.writer.write(b"".join(out))
            if run.stream.writes:
                run.stream.first_content_at = run.stream.first_content_at or run.stream.writes[0]
                run.stream.last_content_at = run.stream.writes[-1]
        if next_due is not None:
            self._schedule(next_due, run)

    def _schedule(self, at: float, run: _Run) -> None:
        self._seq += 1
        heapq.heappush(self._due, _Due(at, self._seq, run))
        if self._due[0].run is run:  # now the earliest: the ticker may be sleeping past it
            assert self._wake is not None
            self._wake.set()

    async def _tick(self) -> None:
        """Write every due chunk, then sleep until the next one (at least TICK, to batch)."""
        assert self._wake is not None
        while True:
            self._wake.clear()
            if not self._due:
                await self._wake.wait()
            else:
                delay = max(self._due[0].at - time.monotonic(), TICK)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
            now = time.monotonic()
            while self._due and self._due[0].at <= now:
                item = heapq.heappop(self._due)
                self._advance(item.run, item.at)


def _last_user_message(body: dict) -> str:
    with contextlib.suppress(LookupError, TypeError):
        return str(body["messages"][-1]["content"])
    return ""


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    payload = orjson.dumps(body)
    lines = [f"HTTP/1.1 {status} Scripted", "content-type: application/json"]
    lines += [f"content-length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
    await writer.drain()


def _dumps(value: Any) -> bytes:
    """orjson, or json where orjson refuses (a lone surrogate: text-hygiene tests send them);
    bytes go out as they are (a payload no encoder would write)."""
    if isinstance(value, bytes):
        return value
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value).encode()
