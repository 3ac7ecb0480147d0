"""`make run WORKERS=N`'s last program: says the cluster serves once a page would answer."""

from pathlib import Path

from django.core.management.base import BaseCommand

from docent import startup


class Command(BaseCommand):
    help = "Wait until nginx listens and a web process is ready, then print where it serves."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--web-ports", required=True, help="The web processes' ports, 1,2,…")
        parser.add_argument(
            "--starting-file", help="Removed once ready (or given up): nginx then proxies."
        )

    def handle(
        self, *args, host: str, port: int, web_ports: str, starting_file: str | None, **options
    ) -> None:
        webs = [int(web) for web in web_ports.split(",")]
        ready = startup.cluster_wait_ready(host=host, port=port, web_ports=webs)
        # Given up too: the processes may still come up, and nginx must then reach them.
        if starting_file:
            Path(starting_file).unlink(missing_ok=True)
        if not ready:
            self.stdout.write(startup.cluster_not_ready_line(host=host, port=port))
            return
        for line in startup.serve_ready_lines(host=host, port=port):
            self.stdout.write(line)
        from docent.assistant_line import assistant_line  # after the serving: it asks the endpoint

        line, problem = assistant_line()
        self.stdout.write(self.style.WARNING(line) if problem else line)
