"""`make run`: prepare the database, then serve HTTP and WebSockets with daphne."""

import gc
import logging

from daphne.endpoints import build_endpoint_description_strings
from daphne.server import Server
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from config.proxy import client_is_loopback

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Migrate, load the demo articles when the blog is empty, index, and serve with daphne."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-prepare", action="store_true", help="Skip migrate/seed/index.")

    def handle(self, *args, host: str, port: int, no_prepare: bool, **options) -> None:
        self.check_debug(host)
        if not no_prepare:
            self.prepare()
        from config.asgi import application

        _drain_turns_on_shutdown()
        # Everything imported so far lives as long as the process: keep it out of the
        # collector's full passes, which otherwise stall every open stream (bench/chat_load).
        gc.collect()
        gc.freeze()
        self.stdout.write(
            self.style.SUCCESS(f"Docent is serving on http://{host}:{port}/ (Ctrl-C stops)")
        )
        # One process serves the site; SIGINT/SIGTERM stop the reactor, then the embedded
        # PostgreSQL is stopped by its exit handler, so nothing is left running.
        Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            action_logger=None,
            http_timeout=None,
            websocket_handshake_timeout=10,
            application_close_timeout=10,
            # No proxy options here: daphne would trust X-Forwarded-For from any peer. Client
            # addresses come from config/proxy.py, which trusts DJANGO_TRUSTED_PROXIES only.
        ).run()

    def check_debug(self, host: str) -> None:
        """Refuse to serve debug pages to the network by accident; shout when DEBUG is on."""
        loopback = host == "localhost" or client_is_loopback(host)
        if settings.DEBUG and not loopback and not settings.DEBUG_EXPLICIT:
            raise CommandError(
                f"--host {host} is not loopback: set HOST={host} (DEBUG then defaults to off) "
                "with DJANGO_SECRET_KEY and DJANGO_ALLOWED_HOSTS, or DJANGO_DEBUG=true."
            )
        if settings.DEBUG:
            bar = "!" * 72
            self.stderr.write(
                f"{bar}\n!! DEBUG IS ON: error pages show settings, paths and source code.\n"
                "!! Never expose this server to a network; set DJANGO_DEBUG=false to deploy.\n"
                f"!! (Non-loopback clients get the plain error pages anyway.)\n{bar}"
            )

    def prepare(self) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("seed_demo", if_empty=True)
        call_command("reindex")  # only changed articles: a no-op start costs well under a second
        call_command("replay_spool")  # turns spooled while the database was down


def _drain_turns_on_shutdown() -> None:
    """On SIGTERM/SIGINT: refuse new turns, save running ones as interrupted, wait for saves."""
    import asyncio

    from twisted.internet import defer, reactor

    from agent.runner import runner

    def drain() -> defer.Deferred:
        runner.closing = True  # at once, before daphne starts cancelling connections
        return defer.Deferred.fromFuture(asyncio.ensure_future(runner.shutdown()))

    reactor.addSystemEventTrigger("before", "shutdown", drain)
