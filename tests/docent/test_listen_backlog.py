"""A web process's listening socket holds a burst of connections it has not accepted yet.

Twisted listens with a backlog of 50; nginx opening hundreds of WebSockets at a web process
busy streaming overflowed it (TcpExtListenOverflows), and the kernel dropped the connections
past it until the client's SYN retry, a second or more later. Read back from the kernel for a
real `manage.py serve`.
"""

import subprocess
from pathlib import Path

import pytest
from django.db import connection

from testing_support.live_server import LiveServer, database_url

pytestmark = pytest.mark.django_db(transaction=True)


def listen_backlog(port: int) -> int:
    """The backlog of the socket listening on `port` (ss shows it as a listener's Send-Q)."""
    out = subprocess.run(
        ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[2])


def test_a_web_process_listens_with_room_for_a_burst_of_connections(tmp_path):
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    name = database_url(connection.settings_dict["NAME"])
    with LiveServer("backlog", name, {}, tmp_path / "spool") as server:
        backlog = listen_backlog(server.port)

    assert backlog == min(1024, somaxconn)
