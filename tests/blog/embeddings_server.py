"""A scripted OpenAI-compatible `/v1/embeddings` server for tests (stdlib only).

It listens on 127.0.0.1 (random port) in a background thread. Each request is answered by
the next queued failure if there is one (`fail(status, retry_after=...)`), else with
deterministic vectors of `dimensions` floats: a one-hot at a position derived from the text,
so equal texts get equal vectors. Every request body is recorded in `requests`.

    with EmbeddingsServer(dimensions=8) as server:
        server.fail(429, retry_after="0")
        ...  # point EMBEDDING_BASE_URL at server.base_url
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.test import override_settings

from blog.embeddings import embedding_dimensions_forget


def scripted_vector(text: str, dimensions: int) -> list[float]:
    """The vector the server returns for `text`: one-hot at a hash-chosen position."""
    position = int(hashlib.sha256(text.encode()).hexdigest(), 16) % dimensions
    return [1.0 if i == position else 0.0 for i in range(dimensions)]


class EmbeddingsServer:
    def __init__(self, *, dimensions: int = 8) -> None:
        self.dimensions = dimensions
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._failures: deque[tuple[int, dict[str, str]]] = deque()
        self._open = threading.Event()  # cleared by hold(): requests wait for release()
        self._open.set()
        self._held_from = 0  # requests beyond this many wait while held
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def fail(self, status: int, *, retry_after: str | None = None) -> None:
        """Answer the next request with this HTTP status (and Retry-After header)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self._failures.append((status, headers))

    def hold(self, *, after: int = 0) -> None:
        """Answer `after` more requests, then keep each waiting (up to a minute) until
        release(): a reindex caught midway."""
        self._held_from = len(self.requests) + after
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._open.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path != "/v1/embeddings":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if len(server.requests) > server._held_from:
                    server._open.wait(timeout=60)
                if server._failures:
                    status, headers = server._failures.popleft()
                    self._send(status, {"error": {"message": "scripted failure"}}, headers)
                    return
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": scripted_vector(text, server.dimensions),
                    }
                    for i, text in enumerate(inputs)
                ]
                data.reverse()  # real servers may answer out of order; clients sort by index
                self._send(200, {"object": "list", "data": data, "model": body["model"]})

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
                pass

        return Handler


@contextmanager
def eight_dimension_backend() -> Iterator[EmbeddingsServer]:
    """The openai backend on a scripted server with 8-dimension vectors, beside an index the
    local model built with 384: every search is a dimension mismatch until `reindex --full`."""
    with (
        EmbeddingsServer(dimensions=8) as server,
        override_settings(
            EMBEDDING_BACKEND="openai",
            EMBEDDING_MODEL="scripted-8",
            EMBEDDING_BASE_URL=server.base_url,
            EMBEDDING_DIMENSIONS=8,
        ),
    ):
        yield server
    embedding_dimensions_forget()  # the stored dimension is read once; a test may change it
