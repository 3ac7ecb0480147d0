"""Start-up as a person meets it, and background work that no longer lives in the web process."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection

from blog.models import Article, Chunk
from docent import cluster, startup
from testing_support.live_server import ROOT, LiveServer, database_url

pytestmark = pytest.mark.django_db(transaction=True)


# A first run is a database that never held an article (docent.startup._release): its ids'
# sequence restarts here, since earlier tests' articles were deleted but their ids stay taken.
FIRST_RUN = pytest.mark.django_db(transaction=True, reset_sequences=True)


def _env() -> dict:
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict["NAME"])}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def _manage(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


def test_an_article_saved_from_a_shell_one_liner_is_indexed_by_the_worker():
    _manage(
        "shell",
        "-c",
        "from blog.models import Article; Article.objects.create(title='Shell', slug='shell',"
        " body='Zeppelins are moored to masts.', status='published')",
    )
    article = Article.objects.get(slug="shell")
    assert not Chunk.objects.filter(article=article).exists()

    _manage("procrastinate", "worker", "--one-shot", "--queues", "index")

    assert Chunk.objects.filter(article=article).exists()


def _jobs_forget() -> None:
    """The job table is not a Django model's: its rows outlive a test (a start with no task
    worker leaves its scan waiting), and a first run's database has none."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_events")
        cursor.execute("DELETE FROM procrastinate_jobs")


@FIRST_RUN
def test_first_run_serves_at_once_and_indexes_the_demo_articles_in_the_background(tmp_path):
    _jobs_forget()
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "{port}"]
    extra = {"TASK_WORKER_IN_PROCESS": "true"}
    with LiveServer("first-run", _env()["DATABASE_URL"], extra, tmp_path, command=command) as web:
        answered_before_indexing = "14/14" not in web.output()
        deadline = time.monotonic() + 600
        while "14/14" not in web.output() and time.monotonic() < deadline:
            time.sleep(0.5)
        output = web.output()

    assert answered_before_indexing
    assert "Indexing demo articles, first run only: 14/14" in output
    assert Chunk.objects.values("article").distinct().count() == 14
    lines = [line for line in output.splitlines() if line.strip()]
    ready = lines.index(next(line for line in lines if line.startswith("Docent is serving")))
    assert lines[ready + 1].startswith("Admin: http://127.0.0.1:")
    assert "createsuperuser" in lines[ready + 2]
    for noise in ("XDG_RUNTIME_DIR", "HTTP/2", "article/s]"):
        assert noise not in output


@FIRST_RUN
def test_the_first_run_queues_its_scan_alone_not_a_job_per_demo_article(task_queue):
    """Each demo article's save queued a job an author's save then waited behind; the first
    run's scan queues them instead, behind any author's save (tests/blog/test_indexing.py)."""
    startup._release(say=lambda line: None)

    assert Article.objects.count() == 14
    assert [job["task_name"] for job in task_queue.jobs.values()] == ["blog.reindex_scan"]
    (job,) = task_queue.jobs.values()
    assert job["args"] == {"first_run": True}


@FIRST_RUN
def test_a_scan_left_waiting_does_not_take_the_first_runs_place(task_queue):
    """A plain scan waiting (a start with no task worker) refused the first run's, silently:
    the demo articles were indexed as one job and no count was shown (CI 87)."""
    from blog.indexing import reindex_scan_enqueue

    assert reindex_scan_enqueue() is True
    startup._release(say=lambda line: None)

    scans = [job for job in task_queue.jobs.values() if job["task_name"] == "blog.reindex_scan"]
    first = max(scans, key=lambda job: job["priority"])
    assert first["args"] == {"first_run": True} and len(scans) == 2


def test_ctrl_c_ends_with_a_line_that_says_docent_stopped_and_where_the_data_is(tmp_path):
    """Everything stopped, but the last line was a request's log: stopped, or crashed?"""
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "{port}"]
    name = connection.settings_dict["NAME"]
    with LiveServer("ctrl-c", _env()["DATABASE_URL"], {}, tmp_path, command=command) as web:
        web.process.send_signal(signal.SIGINT)  # what Ctrl-C sends to `make run`
        assert web.process.wait(timeout=120) == 0
        lines = [line for line in web.output().splitlines() if line.strip()]

    assert lines[-1].startswith(f"Docent stopped; data kept in the database {name} at ")


def test_the_closing_line_names_the_embedded_data_directory(monkeypatch, settings):
    monkeypatch.delenv("DATABASE_URL")
    settings.EMBEDDED_PG_DATA = settings.BASE_DIR / ".data" / "postgres"

    assert startup.stopped_line() == "Docent stopped; data kept in .data/postgres"


def test_the_cluster_runs_the_release_step_once_and_web_processes_never_migrate():
    plan = cluster.cluster_plan(workers=3, host="127.0.0.1", port=8000, database_url="x")
    conf = cluster.supervisord_conf(plan)

    names = [program.name for program in plan.programs]
    assert names.count("release") == 1 and names.count("worker") == 1
    assert [n for n in names if n.startswith("web")] == ["web1", "web2", "web3"]
    release = conf.split("[program:release]")[1].split("[program:")[0]
    assert "autorestart=unexpected" in release and "startsecs=0" in release
    webs = [p.command for p in plan.programs if p.name.startswith("web")]
    assert all("serve --no-prepare" in command for command in webs)
    assert len({command.rsplit(" ", 1)[1] for command in webs}) == 3  # a port each


def test_the_cluster_says_it_serves_from_a_program_that_waits_for_its_web_processes():
    # The command printed "Docent is serving on …" before supervisord had started anything.
    plan = cluster.cluster_plan(workers=2, host="127.0.0.1", port=8621, database_url="x")
    conf = cluster.supervisord_conf(plan)

    announce = plan.programs[-1]
    assert announce.name == "announce" and announce.once
    assert announce.command.endswith(
        "manage.py cluster_ready --host 127.0.0.1 --port 8621 "
        f"--web-ports {plan.web_ports[0]},{plan.web_ports[1]} "
        f"--starting-file {plan.data / 'nginx' / 'starting'}"
    )
    assert "autorestart=unexpected" in conf.split("[program:announce]")[1]


def test_a_web_process_waits_for_the_release_step(monkeypatch):
    from docent import startup

    answers = iter([False, False, True])
    monkeypatch.setattr(startup, "schema_current", lambda: next(answers))
    said = []

    startup.release_wait(timeout=10, say=said.append)

    assert said == ["Waiting for the release step (migrations) to finish..."]
