"""The task worker's own /metrics, for a worker that shares no PROMETHEUS_MULTIPROC_DIR with a
web process (its own pod or VM, as docs/operations.md, "Running in production", deploys it).

What only the worker counts (turns recovered from dead web processes, indexing jobs, spooled
turns it replayed or gave up on) lives in its process: with no web process adding its files
up, nothing served them, and DocentWorkersDying could never fire. The same rule as the web's
/metrics decides who may read it: METRICS_ALLOWED_NETWORKS or the bearer token.

In a pod it listens on 0.0.0.0, so anything on that network reaches it. Each connection is a
thread of the worker's process, and it waited for a request without end: connections that sent
half a request line, or nothing, each kept a thread for ever. Now a connection has
HTTP_HEAD_SECONDS from its accept to its answer, and at most MAX_CONNECTIONS are served at
once; the rest are closed as they are accepted.
"""

import socket
import threading
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ops import multiproc
from ops.views import address_trusted, token_given

MAX_CONNECTIONS = 8  # a scraper needs one; each is a thread of the worker's process
LISTEN_BACKLOG = 64  # socketserver's 5 left a burst of connects waiting on SYN retries


class _Handler(BaseHTTPRequestHandler):
    def setup(self) -> None:
        super().setup()
        # The whole exchange, not each read: a byte every few seconds restarts a read timeout.
        self.deadline = threading.Timer(settings.HTTP_HEAD_SECONDS, self._cut)
        self.deadline.daemon = True
        self.deadline.start()

    def finish(self) -> None:
        self.deadline.cancel()
        with suppress(OSError):  # the deadline may have cut the connection mid-write
            super().finish()

    def _cut(self) -> None:
        with suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)  # the handler's read returns at once

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.path.split("?", 1)[0] != "/metrics":
            self._answer(404, b"Not Found\n", "text/plain")
        elif token_given(self.headers.get("Authorization", "")) or address_trusted(
            self.client_address[0]
        ):
            self._answer(200, generate_latest(multiproc.registry()), CONTENT_TYPE_LATEST)
        else:
            self._answer(403, b"Forbidden\n", "text/plain")

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # a scrape every 15 s is not worth a line


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, *args, **kwargs) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # closed unanswered: no thread for it
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        pass  # a connection cut at its deadline is not worth a traceback


class _Server6(_Server):
    address_family = socket.AF_INET6


def serve(*, host: str, port: int) -> ThreadingHTTPServer:
    """Serve /metrics on host:port from a daemon thread, for the life of the process."""
    server = (_Server6 if ":" in host else _Server)((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True).start()
    return server
