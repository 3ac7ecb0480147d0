"""`make run`: prepare the database, then serve HTTP and WebSockets with daphne at once."""

import gc
import os

from daphne.endpoints import build_endpoint_description_strings
from daphne.server import Server
from django.conf import settings
from django.core.management.base import BaseCommand

from docent import startup


class Command(BaseCommand):
    help = "Migrate, load the demo articles when the blog is empty, serve with daphne, index."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-prepare",
            action="store_true",
            help="Skip the release step (a cluster's web process: wait for it instead).",
        )

    def handle(self, *args, host: str, port: int, no_prepare: bool, **options) -> None:
        if no_prepare:
            startup.release_wait(timeout=120, say=self.stdout.write)
        else:
            startup.release(say=self.stdout.write)
        from config.asgi import application
        from docent.lifecycle import on_shutdown_drain, on_startup

        on_startup(worker=settings.TASK_WORKER_IN_PROCESS)
        on_shutdown_drain()
        # Everything imported so far lives as long as the process: keep it out of the
        # collector's full passes, which otherwise stall every open stream (bench/chat_load).
        gc.collect()
        gc.freeze()
        startup.quiet_daphne()
        if no_prepare:  # one of a cluster's web processes: nginx's address is the site's
            self.stdout.write(f"web process {os.getpid()} listening on {host}:{port}")
        else:
            for line in startup.ready_lines(host=host, port=port):
                self.stdout.write(self.style.SUCCESS(line) if "serving" in line else line)
        # SIGINT/SIGTERM stop the reactor after the drain; then the embedded PostgreSQL is
        # stopped by its exit handler, so nothing is left running.
        Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            action_logger=None,
            http_timeout=None,
            websocket_handshake_timeout=10,
            application_close_timeout=10,
            # Behind a proxy, the client's address comes from its X-Forwarded-For, or every
            # visitor would share the proxy's address (and its per-IP rate limit).
            **(_proxy_headers() if settings.BEHIND_PROXY else {}),
        ).run()


def _proxy_headers() -> dict:
    return {
        "proxy_forwarded_address_header": "X-Forwarded-For",
        "proxy_forwarded_port_header": "X-Forwarded-Port",
        "proxy_forwarded_proto_header": "X-Forwarded-Proto",
    }
