"""`make run`: prepare the database, then serve HTTP and WebSockets with daphne at once."""

import gc
import os
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.proxy import client_is_loopback
from docent import startup


class Command(BaseCommand):
    help = "Migrate, load the demo articles when the blog is empty, serve with daphne, index."
    # Run once the database answers (below): they ask it for its version, so a web process
    # restarted during an outage exited at once instead of waiting, and supervisord gave up.
    requires_system_checks = []

    def say_assistant(self) -> None:
        """Which model answers, and whether its endpoint takes the key, the URL and the name."""
        from docent.assistant_line import assistant_line

        line, problem = assistant_line()
        self.stdout.write(self.style.WARNING(line) if problem else line)

    def add_arguments(self, parser) -> None:
        # HOST and PORT as `make run` reads them (DESIGN's environment): `PORT=9000 manage.py
        # serve` bound 8000, next to someone else's server, and two engineers tripped on it.
        parser.add_argument("--host", default=os.environ.get("HOST") or "127.0.0.1")
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000))
        parser.add_argument(
            "--no-prepare",
            action="store_true",
            help="Skip the release step (a cluster's web process: wait for it instead).",
        )

    def handle(self, *args, host: str, port: int, no_prepare: bool, **options) -> None:
        # `make run WORKERS=N`'s web processes leave DEBUG's banner to `manage.py cluster`,
        # which says it once: with two the console opened on the same banner twice. A web
        # process deployed alone (the Procfile's line) still says it.
        self.check_debug(host, banner=not os.environ.get(startup.DEBUG_BANNER_SAID))
        # Each open connection is a file: at the default 1,024 a busy process refused the rest.
        self.stdout.write(startup.open_files_line(*startup.open_files_raise()))
        if no_prepare:
            startup.release_wait(timeout=120, say=self.stdout.write)
        else:
            startup.release(say=self.stdout.write)
        self.check()
        from config.asgi import application, request_rate
        from docent.lifecycle import (
            DocentServer,
            on_shutdown_drain,
            on_startup,
            on_startup_lag_watch,
        )

        on_startup(worker=settings.TASK_WORKER_IN_PROCESS)
        on_startup_lag_watch()
        on_shutdown_drain()
        # Everything imported so far lives as long as the process: keep it out of the
        # collector's full passes, which otherwise stall every open stream (bench/chat_load).
        gc.collect()
        gc.freeze()
        startup.quiet_daphne()
        if no_prepare:  # one of a cluster's web processes: nginx's address is the site's
            self.stdout.write(f"web process {os.getpid()} listening on {host}:{port}")
        else:
            for line in startup.serve_ready_lines(host=host, port=port):
                self.stdout.write(self.style.SUCCESS(line) if "serving" in line else line)
            # Beside the serving: an endpoint that never answers must not hold the site back.
            threading.Thread(target=self.say_assistant, name="assistant-line", daemon=True).start()
        # SIGINT/SIGTERM stop the reactor after the drain; then the embedded PostgreSQL is
        # stopped by its exit handler, so nothing is left running.
        DocentServer(
            per_peer=settings.HTTP_CONNECTIONS_PER_IP,
            per_network=settings.HTTP_CONNECTIONS_PER_NETWORK,
            over_rate=request_rate.exhausted,
            max_body=settings.HTTP_MAX_BODY_BYTES,
            head_seconds=settings.HTTP_HEAD_SECONDS,
            body_seconds=settings.HTTP_BODY_SECONDS,
            exempt=settings.TRUSTED_PROXIES.peer_trusted
            if settings.TRUSTED_PROXIES.enabled
            else _never,
            application=application,
            endpoints=startup.listen_endpoints(
                host=host, port=port, backlog=settings.HTTP_LISTEN_BACKLOG
            ),
            action_logger=None,
            http_timeout=None,
            # Two clocks run until the application accepts a socket: autobahn's (a reset)
            # and daphne's own (a 403, 20 s by default). One setting for both.
            websocket_handshake_timeout=settings.HTTP_WEBSOCKET_ACCEPT_SECONDS,
            websocket_connect_timeout=settings.HTTP_WEBSOCKET_ACCEPT_SECONDS,
            # A client may leave a message unfinished for as long as it answers pings, and
            # autobahn keeps what it sent: 1 MB per socket by default, 16 times what the chat
            # accepts (AGENT_MAX_FRAME_BYTES).
            websocket_max_message_size=settings.WEBSOCKET_MAX_MESSAGE_BYTES,
            websocket_max_frame_size=settings.WEBSOCKET_MAX_MESSAGE_BYTES,
            application_close_timeout=10,
            # No proxy options here: daphne would trust X-Forwarded-For from any peer. Client
            # addresses come from config/proxy.py, which trusts DJANGO_TRUSTED_PROXIES only.
        ).run()
        if not no_prepare:  # a cluster's process manager says when its web processes stop
            # Without it, Ctrl-C ends on the last request's log line: did it stop, or crash?
            self.stdout.write(startup.stopped_line())

    @staticmethod
    def _shared_state() -> bool:
        return bool(settings.REDIS_URL and os.environ.get("DATABASE_URL"))

    def check_debug(self, host: str, *, banner: bool = True) -> None:
        """Refuse to serve debug pages to the network by accident, or several workers without
        shared state; shout when DEBUG is on."""
        loopback = host == "localhost" or client_is_loopback(host)
        if settings.DEBUG and not loopback and not settings.DEBUG_EXPLICIT:
            raise CommandError(
                f"--host {host} is not loopback: set HOST={host} (DEBUG then defaults to off) "
                "with DJANGO_SECRET_KEY and DJANGO_ALLOWED_HOSTS, or DJANGO_DEBUG=true."
            )
        if not settings.DEBUG and settings.WORKERS > 1 and not self._shared_state():
            raise CommandError(
                f"WORKERS={settings.WORKERS} needs REDIS_URL and DATABASE_URL: limits, turn "
                "locks and budgets must be shared by every worker, and every worker must write "
                "to the same database."
            )
        if settings.DEBUG and banner:
            self.stderr.write(startup.debug_banner())


def _never(_host: str) -> bool:
    return False
