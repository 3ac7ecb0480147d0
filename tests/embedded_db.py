"""Pytest plugin, loaded before Django: a throwaway PostgreSQL and a network guard.

It runs at import time (`-p tests.embedded_db` in pyproject), before pytest-django reads
the settings, so `DATABASE_URL` already points at a private server in a temporary
directory. That server is deleted when the session ends; `.data/` is never touched.
Subprocesses the tests start (daphne, `manage.py`) inherit the same URL.
"""

import ipaddress
import os
import socket
import sys
import tempfile
from pathlib import Path

from config.database import embedded_server


def _xdist_controller() -> bool:
    """True in the process that hands tests to xdist workers (`make test`): it runs none, so
    it needs no server; each worker starts its own."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    args = sys.argv[1:]
    for n, arg in enumerate(args):
        if arg in ("-n", "--numprocesses") and n + 1 < len(args):
            value = args[n + 1]
        elif arg.startswith("--numprocesses="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        else:
            continue
        return value != "0"
    return False


if _xdist_controller():
    # Nothing in the controller connects; a connection that tried would fail at once.
    _root = None
    os.environ["DATABASE_URL"] = "postgresql://xdist-controller@127.0.0.1:1/none"
else:
    _root = Path(tempfile.mkdtemp(prefix="docent-test-pg-"))
    # Sized like the site's server (config.database.embedded_server), so tests see its
    # settings.
    _server = embedded_server(_root / "data", cleanup_mode="delete")
    os.environ["DATABASE_URL"] = _server.get_uri()
    os.environ["DOCENT_TEST_PGDATA"] = str(_root / "data")

# No test may reach a real model endpoint: blank the variables that would select one...
for name in (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "REDIS_URL",
    "EMBEDDING_BASE_URL",
    "EMBEDDING_API_KEY",
):
    os.environ.pop(name, None)
os.environ["DJANGO_DEBUG"] = "true"
# Worker threads must not keep connections open, or the test database cannot be dropped.
os.environ["DB_CONN_MAX_AGE"] = "0"

# ...and refuse any connection that leaves this machine, whatever code tries it.
_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            local = ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = host == "localhost"
        if not local:
            raise ConnectionRefusedError(
                f"tests may not connect to {host}: no real endpoints in tests"
            )
    return _real_connect(self, address)


socket.socket.connect = _loopback_only


def pytest_report_header(config) -> str:
    where = _root or "each xdist worker's temporary directory"
    return f"database: throwaway embedded PostgreSQL in {where}"
