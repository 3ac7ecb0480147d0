"""The task worker's own /metrics, for a worker that shares no PROMETHEUS_MULTIPROC_DIR with a
web process (its own pod or VM, as README "Running in production" deploys it).

What only the worker counts (turns recovered from dead web processes, indexing jobs, spooled
turns it replayed or gave up on) lives in its process: with no web process adding its files
up, nothing served them, and DocentWorkersDying could never fire. The same rule as the web's
/metrics decides who may read it: METRICS_ALLOWED_NETWORKS or the bearer token.
"""

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ops import multiproc
from ops.views import address_trusted, token_given


class _Handler(BaseHTTPRequestHandler):
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


class _Server6(_Server):
    address_family = socket.AF_INET6


def serve(*, host: str, port: int) -> ThreadingHTTPServer:
    """Serve /metrics on host:port from a daemon thread, for the life of the process."""
    server = (_Server6 if ":" in host else _Server)((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True).start()
    return server
