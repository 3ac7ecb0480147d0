"""The task worker: runs queued jobs (indexing, reconciliation, turn recovery, spool drain)."""

from django.conf import settings
from django.core.management.base import BaseCommand

from docent import startup
from ops import worker_metrics


class Command(BaseCommand):
    help = "Wait for the release step, then run the procrastinate worker until SIGTERM."
    requires_system_checks = []  # after the wait: they need the database (see `serve`)

    def handle(self, *args, **options) -> None:
        startup.release_wait(timeout=300, say=self.stdout.write)
        self.check()
        if settings.WORKER_METRICS_PORT:
            host, port = settings.WORKER_METRICS_HOST, settings.WORKER_METRICS_PORT
            worker_metrics.serve(host=host, port=port)
            self.stdout.write(f"Worker metrics on http://{host}:{port}/metrics")
        # Indexing jobs share the lock "index" (one at a time); the other slots keep turn
        # recovery and the spool drain on time while an indexing job runs. The worker gets a
        # pooled psycopg connector (Django's has no LISTEN/NOTIFY).
        startup.worker_run_until_signalled(concurrency=3)
