"""`make run WORKERS=N`'s last program: says the cluster serves once a page would answer."""

from django.core.management.base import BaseCommand

from docent import startup


class Command(BaseCommand):
    help = "Wait until nginx listens and a web process is ready, then print where it serves."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--web-ports", required=True, help="The web processes' ports, 1,2,…")

    def handle(self, *args, host: str, port: int, web_ports: str, **options) -> None:
        webs = [int(web) for web in web_ports.split(",")]
        if not startup.cluster_wait_ready(host=host, port=port, web_ports=webs):
            self.stdout.write(startup.cluster_not_ready_line(host=host, port=port))
            return
        for line in startup.serve_ready_lines(host=host, port=port):
            self.stdout.write(line)
