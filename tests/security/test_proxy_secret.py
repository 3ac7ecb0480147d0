"""A cluster's web process believes X-Forwarded-For from its nginx only, not any local user.

`make run WORKERS=N` runs its web processes on loopback ports behind nginx and trusts one proxy
hop (DJANGO_TRUSTED_PROXIES=1); a trusted peer is judged by its address, and loopback is every
local user's. A request sent straight to a worker's port was believed whatever X-Forwarded-For
it wrote: a fresh address per request, every per-address allowance afresh (the day's messages,
searches, sign-ins), or a victim's address spent. nginx now vouches with a secret of the
cluster's (DJANGO_TRUSTED_PROXY_SECRET, in X-Docent-Proxy); without it the headers are a
forgery's, and the request is its peer's.
"""

import os
import shutil
import socket
import stat
import uuid

import pytest

from docent.cluster import cluster_plan, cluster_write, nginx_conf
from tests.security.test_proxy_connections import running_proxy, status_read

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
    ),
]

SECRET = "red18-proxy-secret-0123456789abcdef"
READS = 2  # transcript reads an address may make a minute here: cheap, and counted per address


def _read(port: int, *, source: str = "127.0.0.1", headers: dict[str, str] | None = None) -> int:
    """A transcript read (an unknown id: 404, or 429 once the address has made its READS)."""
    lines = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    path = f"/api/conversations/{uuid.uuid4()}"
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as c:
        head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines}Connection: close\r\n\r\n"
        c.sendall(head.encode())
        return status_read(c)


def test_a_local_user_at_a_workers_port_cannot_name_its_own_address(serve, tmp_path):
    server = serve(
        "proxy-secret",
        DJANGO_TRUSTED_PROXIES="1",
        DJANGO_TRUSTED_PROXY_SECRET=SECRET,
        AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP=str(READS),
    )

    # Straight to the worker, a new address forged each time (the secret guessed, once).
    forged = [
        _read(server.port, headers={"X-Forwarded-For": f"203.0.113.{n}"}) for n in range(1, 5)
    ]
    guessed = _read(
        server.port, headers={"X-Forwarded-For": "203.0.113.9", "X-Docent-Proxy": "guess"}
    )
    with running_proxy(tmp_path, host="127.0.0.1", web_port=server.port, proxy_secret=SECRET) as (
        port,
        _,
    ):
        # Through nginx, which vouches: each visitor (a loopback source of its own) is itself.
        visitors = {
            source: [_read(port, source=source) for _ in range(READS + 1)]
            for source in ("127.0.0.4", "127.0.0.5")
        }

    # Before: four fresh addresses, four reads answered (404), past an allowance of two.
    assert forged == [404, 404, 429, 429]  # one address: the worker's peer
    assert guessed == 429
    assert visitors == {source: [404] * READS + [429] for source in ("127.0.0.4", "127.0.0.5")}


def test_nginx_sends_the_secret_only_when_the_cluster_has_one(tmp_path):
    with_secret = nginx_conf(
        prefix=tmp_path, web_ports=[1], host="127.0.0.1", port=2, proxy_secret=SECRET
    )
    without = nginx_conf(prefix=tmp_path, web_ports=[1], host="127.0.0.1", port=2)

    assert f'proxy_set_header X-Docent-Proxy "{SECRET}";' in with_secret
    assert "X-Docent-Proxy" not in without


def test_the_cluster_gives_its_nginx_and_workers_a_secret_only_its_owner_reads(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    cluster_write(plan)
    secret = plan.env["DJANGO_TRUSTED_PROXY_SECRET"]
    nginx = plan.data / "nginx" / "nginx.conf"

    assert len(secret) >= 32 and secret in nginx.read_text()
    assert secret in (plan.data / "supervisord.conf").read_text()  # the workers' environment
    assert all(secret not in program.command for program in plan.programs)  # `ps` shows those
    for private in (nginx, plan.data / "supervisord.conf"):
        assert stat.S_IMODE(os.stat(private).st_mode) == 0o600, private


def test_the_test_cluster_vouches_as_the_real_one_does(tmp_path):
    """testing_support's cluster ran nginx without the secret and its workers without one, so
    no cluster test exercised the check `make run WORKERS=N` depends on."""
    from django.db import connection

    from testing_support.cluster import LocalCluster
    from testing_support.live_server import database_url

    url = database_url(connection.settings_dict["NAME"])
    extra = {"AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP": str(READS)}
    with LocalCluster(url, tmp_path, extra=extra, workers=1) as cluster:
        worker = cluster.webs[0].port
        forged = [_read(worker, headers={"X-Forwarded-For": f"203.0.113.{n}"}) for n in (1, 2, 3)]
        visitors = {
            source: [_read(cluster.port, source=source) for _ in range(READS + 1)]
            for source in ("127.0.0.4", "127.0.0.5")
        }

    # Before: three forged addresses, three reads answered past an allowance of two.
    assert forged == [404, 404, 429]
    # nginx's secret reaches the worker: each visitor is itself, not nginx's loopback peer.
    assert visitors == {source: [404] * READS + [429] for source in ("127.0.0.4", "127.0.0.5")}
