"""Two release steps at once (a Job retried while the first still runs) take turns.

Each test runs `manage.py release` in subprocesses against a new, empty database of the test
server, so the migrations really run.
"""

import os
import subprocess
import sys
import threading
import uuid

import psycopg
import pytest
from django.db import connection

from docent.startup import RELEASE_LOCK
from testing_support.live_server import ROOT, database_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def empty_database():
    name = f"release_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(name)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def release(url: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "WARNING"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", "release"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def waiting_for_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        query = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        return conn.execute(query).fetchone()[0] > 0


def test_a_release_waits_while_another_holds_the_release_lock(empty_database):
    with psycopg.connect(empty_database, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", [RELEASE_LOCK])
        second = release(empty_database)
        pause = threading.Event()
        while not waiting_for_a_lock(empty_database):
            assert second.poll() is None, second.stdout.read()
            pause.wait(0.1)
        tables = holder.execute("SELECT to_regclass('django_migrations')").fetchone()[0]
        assert tables is None  # nothing migrated while the first one holds the lock
        holder.execute("SELECT pg_advisory_unlock(%s)", [RELEASE_LOCK])

        output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output
    assert "Release done." in output


def test_two_releases_at_once_migrate_and_load_the_demo_articles_once(empty_database):
    runs = [release(empty_database) for _ in range(2)]
    outputs = [run.communicate(timeout=600)[0] for run in runs]

    assert [run.returncode for run in runs] == [0, 0], outputs
    assert sum("demo articles" in output for output in outputs) == 1


def test_a_blog_whose_demo_articles_were_deleted_gets_none_back_at_the_next_start(
    empty_database,
):
    first, _ = release(empty_database).communicate(timeout=600)
    assert "Loaded 14 demo articles" in first
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute("TRUNCATE blog_article CASCADE")  # the author deletes them all

    run = release(empty_database)
    second, _ = run.communicate(timeout=600)

    assert run.returncode == 0, second
    assert "demo articles" not in second
    with psycopg.connect(empty_database, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM blog_article").fetchone()[0] == 0
