"""The local cluster's Redis asks for a password, kept out of every command line.

`make run WORKERS=N` started redis-server on 127.0.0.1 with no password: any user of the machine
could connect and lift the limits, budgets and conversation locks the workers share there
(`DEL lim:*`, a `running:` lock deleted, a budget set back to 0).
"""

import os
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import redis

from docent.cluster import cluster_plan, cluster_write


def _redis_program(plan) -> str:
    return next(program.command for program in plan.programs if program.name == "redis")


def _ping(url: str, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return redis.Redis.from_url(url, socket_timeout=2).ping()
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_clusters_redis_refuses_a_client_without_the_password(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    cluster_write(plan)
    command = _redis_program(plan)
    server = subprocess.Popen(shlex.split(command), stdout=subprocess.DEVNULL)
    try:
        assert _ping(plan.env["REDIS_URL"])  # the workers' URL carries the password
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=plan.redis_port, socket_timeout=2).ping()
        with open(f"/proc/{server.pid}/cmdline", "rb") as shown:
            seen = shown.read()
    finally:
        server.terminate()
        server.wait(timeout=30)

    assert plan.redis_password and plan.redis_password.encode() not in seen
    assert plan.redis_password not in command  # `ps` shows every command line to everyone
    for private in (plan.data / "redis" / "auth.conf", plan.data / "supervisord.conf"):
        assert stat.S_IMODE(os.stat(private).st_mode) == 0o600, private


def test_a_redis_url_given_is_used_as_it_is(settings, tmp_path, monkeypatch):
    settings.BASE_DIR = tmp_path
    monkeypatch.setenv("REDIS_URL", "redis://:given@10.0.0.5:6379/2")
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    cluster_write(plan)

    assert plan.env["REDIS_URL"] == "redis://:given@10.0.0.5:6379/2"
    assert "redis" not in {program.name for program in plan.programs}
    assert not (plan.data / "redis" / "auth.conf").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="reading as another user needs root to switch")
def test_another_local_user_cannot_read_the_session_keys_redis_keeps(settings):
    # redis-server writes its append-only file with the umask (0644), and the limits' keys name
    # the visitors' session keys, the cookies themselves: a signed-in editor's is their admin
    # session. In a checkout any user may enter (as /work or a home directory often is), user
    # `nobody` read them back.
    checkout = Path(tempfile.mkdtemp(prefix="docent-checkout-"))
    checkout.chmod(0o755)
    settings.BASE_DIR = checkout
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    cluster_write(plan)
    server = subprocess.Popen(shlex.split(_redis_program(plan)), stdout=subprocess.DEVNULL)
    key = "0123456789abcdefghijklmnopqrstuv"
    try:
        assert _ping(plan.env["REDIS_URL"])
        redis.Redis.from_url(plan.env["REDIS_URL"]).zadd(f"rl:s:{key}", {"1": 1.0})
        log = next((plan.data / "redis").rglob("*.incr.aof"))
        assert key in log.read_text(errors="replace")  # what is at stake
        stranger = subprocess.run(
            ["runuser", "-u", "nobody", "--", "cat", str(log)], capture_output=True, text=True
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(checkout, ignore_errors=True)

    assert key not in stranger.stdout, "another local user read a session key"  # before: read
    assert stranger.returncode != 0 and "Permission denied" in stranger.stderr


def test_the_clusters_metrics_files_are_this_users_alone(settings, tmp_path, monkeypatch):
    # The metrics directory was 0755 with 0644 files (red team 27): any local user read the
    # counters of every process. A web process makes it the same way if it is missing.
    from ops.multiproc import directory_ensure

    settings.BASE_DIR = tmp_path
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    cluster_write(plan)
    assert stat.S_IMODE(os.stat(plan.data / "prometheus").st_mode) == 0o700

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "elsewhere" / "metrics"))
    directory_ensure()
    assert stat.S_IMODE(os.stat(tmp_path / "elsewhere" / "metrics").st_mode) == 0o700
