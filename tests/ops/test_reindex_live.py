"""`manage.py reindex` in a process of its own, as the site's scrape and the log show it."""

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from blog.models import ReindexRun
from blog.reindex_runs import SILENT_SECONDS
from testing_support.live_server import database_url
from testing_support.waits import wait_until
from tests.blog.embeddings_server import EmbeddingsServer
from tests.ops.prom import parse, value
from tests.ops.test_incidents_live import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

BODY = "Intro.\n\n## One\n\nFirst part.\n\n## Two\n\nSecond part.\n"


def test_a_reindex_shows_in_the_sites_metrics_while_it_runs_and_as_it_ends(
    make_article, client, tmp_path
):
    """A full reindex (92 s for 14 articles) moved no metric and wrote no line where the site
    logs: nothing told an operator one ran, how far it had got, or that it had finished."""
    for title in ("Alpha", "Beta", "Gamma"):
        make_article(title=title, body=BODY)
    log = tmp_path / "reindex.log"
    with EmbeddingsServer(dimensions=384) as embeddings:
        embeddings.hold(after=1)  # the first article embedded, the second kept waiting
        reindex = _reindex(log, embeddings)
        midway = lambda: _scraped(client, "docent_reindex_articles", progress="scanned") == 1  # noqa: E731
        wait_until(midway, "the first article counted", seconds=120)
        running = _scrape(client)
        embeddings.release()
        assert reindex.wait(timeout=120) == 0
    done = _scrape(client)

    assert value(running, "docent_reindex_state", state="running") == 1
    assert value(running, "docent_reindex_articles", progress="total") == 3
    assert value(running, "docent_reindex_last_success_timestamp_seconds") == 0  # none yet
    assert value(done, "docent_reindex_state", state="running") == 0
    assert value(done, "docent_reindex_state", state="done") == 1
    assert value(done, "docent_reindex_articles", progress="scanned") == 3
    assert value(done, "docent_reindex_articles", progress="changed") == 3
    assert value(done, "docent_reindex_chunks_embedded") == 9
    assert value(done, "docent_index_chunks") == 9
    assert value(done, "docent_reindex_last_success_timestamp_seconds") > 0
    run = ReindexRun.objects.get().pk
    started, finished = _lines(log)
    assert started["message"] == f"reindex {run} started: 3 published articles to scan"
    assert started["level"] == "INFO" and started["articles_total"] == 3
    assert finished["message"].startswith(f"reindex {run} finished in ")
    assert finished["message"].endswith(
        ": 3 of 3 articles scanned, 3 changed, 9 chunks embedded, 0 unpublished removed"
    )
    assert finished["outcome"] == "done" and finished["logger"] == "blog.reindex_runs"


def test_a_failed_reindex_says_so_in_the_log_and_the_metrics(make_article, client, tmp_path):
    """The embedding endpoint failing the reindex: the command's error went to its own
    terminal, and the site's metrics could not tell a failed run from a finished one."""
    for title in ("Alpha", "Beta"):
        make_article(title=title, body=BODY)
    log = tmp_path / "reindex.log"
    with EmbeddingsServer(dimensions=384) as embeddings:
        embeddings.fail(500)
        status = _reindex(log, embeddings).wait(timeout=120)
    failed = _scrape(client)

    assert status == 1  # CommandError
    assert value(failed, "docent_reindex_state", state="failed") == 1
    assert value(failed, "docent_reindex_articles", progress="total") == 2
    assert value(failed, "docent_reindex_articles", progress="scanned") == 0
    run = ReindexRun.objects.get()
    assert run.outcome == "failed" and run.error.startswith("EmbeddingError: ")
    started, said = _lines(log)
    assert said["level"] == "ERROR" and said["outcome"] == "failed"
    assert said["message"].startswith(f"reindex {run.pk} failed after ")
    assert ": 0 of 2 articles scanned; EmbeddingError: " in said["message"]


def test_a_killed_reindex_reads_lost_once_silent(make_article, client, tmp_path):
    """`kill -9` of a reindex leaves its row `running`: once it has been silent for
    SILENT_SECONDS the scrape says `lost`, not running for ever."""
    make_article(title="Alpha", body=BODY)
    with EmbeddingsServer(dimensions=384) as embeddings:
        embeddings.hold()
        reindex = _reindex(tmp_path / "reindex.log", embeddings)
        started = lambda: _scraped(client, "docent_reindex_state", state="running") == 1  # noqa: E731
        wait_until(started, "the reindex started", seconds=120)
        reindex.kill()
        reindex.wait(timeout=30)
    killed = _scrape(client)
    # Its last progress SILENT_SECONDS ago and a moment more, without waiting five minutes.
    silent = timezone.now() - timedelta(seconds=SILENT_SECONDS + 1)
    ReindexRun.objects.update(progress_at=silent)
    lost = _scrape(client)

    assert value(killed, "docent_reindex_state", state="running") == 1  # silent only just
    assert value(lost, "docent_reindex_state", state="running") == 0
    assert value(lost, "docent_reindex_state", state="lost") == 1


def _reindex(log, embeddings: EmbeddingsServer, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
        "EMBEDDING_BACKEND": "openai",
        "EMBEDDING_MODEL": "scripted-embeddings",
        "EMBEDDING_BASE_URL": embeddings.base_url,
        "EMBEDDING_API_KEY": "test",
        "EMBEDDING_MAX_RETRIES": "0",
        "LOG_FORMAT": "json",
    }
    with log.open("w") as out:
        return subprocess.Popen(  # noqa: S603
            [sys.executable, "manage.py", "reindex", "-v0", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )


def _scrape(client) -> dict:
    response = client.get("/metrics")
    assert response.status_code == 200
    return parse(response.content.decode())


def _scraped(client, name: str, **labels: str) -> float:
    return value(_scrape(client), name, **labels)


def _lines(log) -> list[dict]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if line["logger"] == "blog.reindex_runs"]
