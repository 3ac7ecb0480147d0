"""The embedded PostgreSQL's `shared_buffers`: sized to the machine, not the 128 MB default."""

import tempfile
from pathlib import Path

import psycopg
import pytest

from config.database import embedded_server, embedded_shared_buffers_mb


def _shared_buffers_bytes(uri: str) -> int:
    with psycopg.connect(uri) as conn:
        return conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))").fetchone()[0]


@pytest.mark.parametrize(
    ("memory_gb", "expected_mb"),
    [(0.5, 128), (2, 256), (4, 512), (8, 1024), (64, 1024)],
)
def test_shared_buffers_is_an_eighth_of_memory_between_128_mb_and_1_gb(memory_gb, expected_mb):
    assert embedded_shared_buffers_mb(int(memory_gb * 2**30)) == expected_mb


def test_a_new_embedded_server_runs_with_the_sized_shared_buffers_and_keeps_them():
    wanted = embedded_shared_buffers_mb() * 2**20
    with tempfile.TemporaryDirectory(prefix="docent-test-memory-") as root:
        data = Path(root) / "data"
        server = embedded_server(data, cleanup_mode="stop")
        try:
            assert _shared_buffers_bytes(server.get_uri()) == wanted
            # Written to the data directory, so every later start of this server has it.
            auto_conf = (data / "postgresql.auto.conf").read_text()
            assert f"shared_buffers = '{embedded_shared_buffers_mb()}MB'" in auto_conf
            # Joining a running server that already has it does not restart it.
            pid = server.get_pid()
            assert embedded_server(data, cleanup_mode="stop").get_pid() == pid
        finally:
            server.cleanup()


def test_the_test_server_runs_with_the_sized_shared_buffers(django_db_blocker):
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))")
        assert cursor.fetchone()[0] == embedded_shared_buffers_mb() * 2**20
