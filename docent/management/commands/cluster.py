"""`make run WORKERS=N`: write the cluster's configuration, then become its supervisord."""

import os
import subprocess
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from docent import cluster, startup


class Command(BaseCommand):
    help = "Run release, postgres, redis, nginx, N web processes and a task worker (supervisord)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--workers", type=int, required=True)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, workers: int, host: str, port: int, **options) -> None:
        if workers < 2:
            raise CommandError("--workers must be 2 or more; `make run` alone is one process.")
        missing = cluster.missing_system_packages(need_redis=not os.environ.get("REDIS_URL"))
        if missing:
            raise CommandError(
                f"make run WORKERS={workers} needs {', '.join(missing)}: "
                f"sudo apt-get install -y {' '.join(missing)}"
            )
        # First, before the database starts and the static files are copied: they took 14 s
        # on two cores, and the console said nothing until they were done.
        if settings.DEBUG:  # said once here; the web processes do not repeat it
            self.stderr.write(startup.debug_banner())
        self.stdout.write(startup.cluster_starting_line(host=host, port=port))
        sys.stdout.flush()
        plan = cluster.cluster_plan(
            workers=workers, host=host, port=port, database_url=_database_url()
        )
        _collectstatic(plan.env)
        conf = cluster.cluster_write(plan)
        self.stdout.write(
            f"{workers} web processes behind nginx. Their process ids: "
            f"{sys.executable} -m supervisor.supervisorctl -c {conf} pid all"
        )
        sys.stdout.flush()
        # Become supervisord (same pid, so Ctrl-C and `kill` reach it; it stops the rest).
        supervisord = [sys.executable, "-m", "supervisor.supervisord", "-c", str(conf)]
        os.execv(sys.executable, supervisord)  # noqa: S606 - our own interpreter and config


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from config.database import embedded_url

    # Started here once (the settings already joined it); the `postgres` process owns it.
    return embedded_url(settings.EMBEDDED_PG_DATA)


def _collectstatic(env: dict[str, str]) -> None:
    """Hashed copies of static files for nginx (ManifestStaticFilesStorage)."""
    subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        env={**os.environ, **env},
        check=True,
    )
