"""The admin login page on a first run says how to get an account."""

import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from testing_support.live_server import free_port

pytestmark = pytest.mark.django_db

COMMAND = ".venv/bin/python manage.py createsuperuser"


def test_the_login_page_says_how_to_create_the_first_account_until_one_exists(client):
    page = client.get("/admin/login/").content.decode()
    assert "No admin account exists yet" in page and COMMAND in page
    assert 'id="login-form"' in page  # Django's own form is still there
    chinese = client.get("/admin/login/", headers={"accept-language": "zh-hans"}).content.decode()
    assert "还没有管理员账号" in chinese and COMMAND in chinese

    users = get_user_model().objects
    users.create_user("visitor", password="x")  # not staff: nobody can log in yet
    assert COMMAND in client.get("/admin/login/").content.decode()

    users.create_superuser("admin", password="x")
    page = client.get("/admin/login/").content.decode()
    assert COMMAND not in page and 'id="login-form"' in page


def test_the_hint_is_not_shown_to_the_network_with_debug_off(client, settings):
    # A visitor from elsewhere learnt the site was a fresh install with no account yet.
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver"]

    remote = client.get("/admin/login/", REMOTE_ADDR="203.0.113.9").content.decode()
    local = client.get("/admin/login/").content.decode()  # 127.0.0.1: the operator

    assert COMMAND not in remote and 'id="login-form"' in remote
    assert COMMAND in local


def test_start_up_prints_the_createsuperuser_hint_only_while_no_account_exists():
    # Every restart printed "Create an admin account" long after one had been created.
    from docent.startup import serve_ready_lines

    lines = serve_ready_lines(host="127.0.0.1", port=8000)
    assert lines[:2] == ["Docent is serving on http://127.0.0.1:8000/ (Ctrl-C stops)",
                         "Admin: http://127.0.0.1:8000/admin/"]  # fmt: skip
    assert COMMAND in lines[2]

    get_user_model().objects.create_superuser("admin", password="x")
    assert [
        line for line in serve_ready_lines(host="127.0.0.1", port=8000) if COMMAND in line
    ] == []


def test_the_cluster_prints_the_hint_only_while_no_account_exists_too():
    # `make run WORKERS=n` printed "Create an admin account" on every start, as serve did.
    with ReadyServer(not_ready=0) as server:
        assert COMMAND in ready_output(server.port)
        get_user_model().objects.create_superuser("admin", password="x")
        lines = ready_output(server.port).splitlines()
    assert lines == [
        f"Docent is serving on http://127.0.0.1:{server.port}/ (Ctrl-C stops)",
        f"Admin: http://127.0.0.1:{server.port}/admin/",
        # Which model answers, as `make run` says it (docent/assistant_line.py).
        "Assistant: the built-in offline model (Quote mode); for a language model set "
        "OPENAI_API_KEY or OPENAI_BASE_URL, and AGENT_MODEL",
    ]


def test_the_cluster_says_it_serves_only_once_a_page_would_answer():
    # It printed "Docent is serving on …" before supervisord had started anything: the first
    # page, 25 s later, was a refused connection, then nginx's 502 (tests/security).
    with ReadyServer(not_ready=3) as server:
        output = ready_output(server.port)
    assert server.asked == 4  # three 502s, then the 200
    assert output.startswith(f"Docent is serving on http://127.0.0.1:{server.port}/")


def test_the_cluster_waits_for_nginx_and_a_ready_web_process_and_says_when_neither_came():
    from docent import startup

    with ReadyServer(not_ready=10**6) as never, ReadyServer(not_ready=0) as ready:
        # A web process that never gets ready; nginx not listening (a closed port).
        assert not startup.cluster_wait_ready(
            host="127.0.0.1", port=never.port, web_ports=[never.port], seconds=0.3, poll=0.05
        )
        assert not startup.cluster_wait_ready(
            host="127.0.0.1", port=free_port(), web_ports=[ready.port], seconds=0.3, poll=0.05
        )
        # One never ready: the site opens once the others have waited `laggard` for it.
        assert startup.cluster_wait_ready(
            host="127.0.0.1",
            port=ready.port,
            web_ports=[never.port, ready.port],
            poll=0.05,
            laggard=0.2,
        )
    line = startup.cluster_not_ready_line(host="127.0.0.1", port=8621)
    assert line.startswith("Docent is not answering on http://127.0.0.1:8621/ after 10 minutes")


def test_the_cluster_waits_for_every_web_process_before_nginx_proxies():
    # Let through once the first was ready, nginx's first request to the second, still
    # loading, logged `[error] connect() failed (111: Connection refused)` at cluster start.
    from docent import startup

    with ReadyServer(not_ready=0) as first, ReadyServer(not_ready=3) as second:
        assert startup.cluster_wait_ready(
            host="127.0.0.1", port=first.port, web_ports=[first.port, second.port], poll=0.05
        )
    assert second.asked == 4  # three refusals, then ready


def ready_output(port: int) -> str:
    out = io.StringIO()
    # nginx and the web process in one stand-in: /readyz is asked of the web processes.
    call_command("cluster_ready", host="127.0.0.1", port=port, web_ports=str(port), stdout=out)
    return out.getvalue()


class ReadyServer:
    """/readyz through a stand-in for the cluster's nginx: 502 `not_ready` times, then 200."""

    def __init__(self, *, not_ready: int) -> None:
        self.not_ready, self.asked = not_ready, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.asked += 1
                self.send_response(502 if owner.asked <= owner.not_ready else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def __enter__(self) -> "ReadyServer":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
