"""While `make run WORKERS=N` starts, nginx answers with the starting page and logs nothing."""

import dataclasses
import io
import shutil
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command

from docent import cluster
from testing_support.live_server import free_port
from tests.docent.test_login_hint import ReadyServer
from tests.security.test_proxy_api_errors import get, page_get, sent
from tests.security.test_proxy_connections import running_proxy

REFUSED = "connect() failed (111: Connection refused) while connecting to upstream"


@pytest.fixture
def nginx_dir():
    """A directory nginx's workers can look into: started by root, they run as nobody (as in
    `make run WORKERS=N` under .data/cluster), and pytest's tmp_path is root's alone."""
    with tempfile.TemporaryDirectory() as name:
        Path(name).chmod(0o755)
        yield Path(name)


@pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
def test_nginx_answers_the_starting_page_quietly_until_the_marker_goes(
    nginx_dir: Path, tmp_path: Path
):
    # A reader's page refreshing itself while the cluster booted (55 s on two cores) put two
    # [error] lines a request on the console, 90 in all, burying "Release done." and the rest.
    nobody = free_port()  # the web processes are still booting: nothing listens yet
    log = tmp_path / "nginx.err"
    with log.open("wb") as stderr:
        with running_proxy(nginx_dir, host="127.0.0.1", web_port=nobody, stderr=stderr) as (
            port,
            _,
        ):
            cluster.starting_marker(nginx_dir / "nginx").touch()
            booting = [sent(port, "127.0.0.17", page_get("/")) for _ in range(3)]
            api = sent(port, "127.0.0.17", get("/api/search?q=x"))
            quiet = log.read_text()
            cluster.starting_marker(nginx_dir / "nginx").unlink()
            after = sent(port, "127.0.0.17", page_get("/"))
    for status, _headers, body in booting:
        assert status == 502 and b"<h1>Docent is starting or restarting</h1>" in body
    assert api[0] == 502 and api[1]["content-type"] == "application/json"
    assert REFUSED not in quiet and "[crit]" not in quiet
    # Once the cluster said it serves, a process that refuses is news again, and logged.
    assert after[0] == 502 and REFUSED in log.read_text()


def test_cluster_ready_removes_the_marker_when_it_serves(tmp_path: Path, db):
    marker = tmp_path / "starting"
    marker.touch()
    out = io.StringIO()
    with ReadyServer(not_ready=1) as web:
        call_command(
            "cluster_ready",
            host="127.0.0.1",
            port=web.port,
            web_ports=str(web.port),
            starting_file=str(marker),
            stdout=out,
        )
    assert not marker.exists()
    assert "Docent is serving on" in out.getvalue()


def test_a_new_cluster_starts_with_the_marker(tmp_path: Path):
    plan = cluster.cluster_plan(workers=2, host="127.0.0.1", port=free_port(), database_url="x")
    plan = dataclasses.replace(plan, data=tmp_path)
    cluster.cluster_write(plan)
    assert cluster.starting_marker(plan.data / "nginx").exists()


def test_the_cluster_says_it_is_starting_before_its_slow_preparations(
    monkeypatch, capsys, settings
):
    from docent.management.commands import cluster as command

    settings.DEBUG = True
    said_by_then = []

    def collectstatic(env):
        said_by_then.append(capsys.readouterr())
        raise SystemExit(0)  # stop here: nothing to start in a test

    monkeypatch.setattr(cluster, "missing_system_packages", lambda **_: [])
    monkeypatch.setattr(command, "_database_url", lambda: "postgres://127.0.0.1/x")
    monkeypatch.setattr(command, "_collectstatic", collectstatic)
    with pytest.raises(SystemExit):
        call_command("cluster", "--workers", "2", "--port", "8621")
    out, err = said_by_then[0]
    assert out.startswith("Docent is starting on http://127.0.0.1:8621/")
    assert err.count("DEBUG IS ON") == 1  # said once, here, for every process


def test_a_cluster_web_process_does_not_repeat_the_debug_banner(capsys, settings, monkeypatch):
    # Each web process shouted it again: with two, the console opened on the same 5-line
    # banner twice. A web process on its own (the Procfile's line, deployed) still says it.
    from docent.management.commands.serve import Command

    settings.DEBUG = True
    plan = cluster.cluster_plan(workers=2, host="127.0.0.1", port=free_port(), database_url="x")
    assert plan.env["DOCENT_DEBUG_BANNER_SAID"] == "1"
    Command().check_debug("127.0.0.1", banner=False)
    assert "DEBUG IS ON" not in capsys.readouterr().err
    Command().check_debug("127.0.0.1")
    assert "DEBUG IS ON" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
def test_the_clusters_redis_writes_its_own_lines_to_its_file_not_the_console(settings, tmp_path):
    # "oO0OoO0OoO0Oo Redis is starting" and "WARNING Memory overcommit must be enabled!" (a
    # production host's setting) sat between Docent's lines on every `make run WORKERS=2`.
    import shlex
    import subprocess
    import time

    settings.BASE_DIR = tmp_path
    plan = cluster.cluster_plan(workers=2, host="127.0.0.1", port=free_port(), database_url="x")
    cluster.cluster_write(plan)
    (redis,) = [program for program in plan.programs if program.name == "redis"]
    log = plan.data / "redis" / "redis.log"
    # As supervisord runs it: the command split as a shell would, no shell between.
    command = shlex.split(redis.command)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # noqa: S603
    try:
        deadline = time.monotonic() + 30
        while "Redis is starting" not in (log.read_text() if log.exists() else ""):
            assert process.poll() is None, process.stdout.read()
            assert time.monotonic() < deadline, "redis-server wrote no log"
            time.sleep(0.05)
    finally:
        process.terminate()
        console = process.communicate(timeout=30)[0].decode()
    assert console == ""
