"""A web process raises its open files limit to the hard limit, and says so.

Linux starts a process with a soft limit of 1,024 open files, whatever its hard limit: a web
process with that many sockets, database connections and files open could accept no more
(EMFILE), and every new visitor, `/healthz` included, waited in the listen queue. Made for real:
a `manage.py serve` started at 1,024 is held 1,100 idle connections, then asked for /healthz.
"""

import http.client
import resource
import socket
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.db import connection

from testing_support.live_server import LiveServer, database_url

pytestmark = pytest.mark.django_db(transaction=True)

START_SOFT = 1024  # Linux's default soft limit
IDLE = 1100  # past it
# Start the server with the default soft limit, whatever the test run's own.
LOWERED = (
    "import os, resource, sys; "
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({START_SOFT}, "
    "resource.getrlimit(resource.RLIMIT_NOFILE)[1])); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def soft_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open files line")


def test_a_web_process_takes_more_connections_than_the_default_limit(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2 * IDLE:
        pytest.skip(f"the hard open files limit ({hard}) leaves no room to test past {START_SOFT}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2 * IDLE), hard))  # our own sockets
    command = [sys.executable, "-c", LOWERED, "manage.py", "serve", "--no-prepare"]
    command += ["--host", "127.0.0.1", "--port", "{port}"]
    env = {"HTTP_CONNECTIONS_PER_IP": "100000"}  # the per-address cap out of the way
    url = database_url(connection.settings_dict["NAME"])
    server = LiveServer("open-files", url, env, tmp_path / "spool", command=command)
    with server, ExitStack() as idle:
        raised = soft_limit(server.pid)
        for _ in range(IDLE):
            idle.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        probe = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:  # before: no answer, the connection never accepted
            probe.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
            status = probe.getresponse().status
        finally:
            probe.close()

    assert raised == hard if hard != resource.RLIM_INFINITY else raised > IDLE
    assert status == 200
    assert f"Open files: up to {raised:,} per process (raised from {START_SOFT:,})" in (
        server.output()
    )
