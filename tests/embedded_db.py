"""Pytest plugin, loaded before Django: a throwaway PostgreSQL and a network guard.

It runs at import time (`-p tests.embedded_db` in pyproject), before pytest-django reads
the settings, so `DATABASE_URL` already points at a private server in a temporary
directory. That server is deleted when the session ends; `.data/` is never touched.
Subprocesses the tests start (daphne, `manage.py`) inherit the same URL.
"""

import ipaddress
import os
import socket
import tempfile
from pathlib import Path

from config.database import embedded_server

_root = Path(tempfile.mkdtemp(prefix="docent-test-pg-"))
# Sized like the site's server (config.database.embedded_server), so tests see its settings.
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
    return f"database: throwaway embedded PostgreSQL in {_root}"
