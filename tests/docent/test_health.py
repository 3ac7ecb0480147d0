"""/healthz, /readyz and the cluster command's one clear line for missing system packages."""

import pytest
from django.core.management import CommandError, call_command

from agent.runner import runner
from docent import cluster, health


@pytest.mark.django_db
def test_healthz_answers_while_the_process_lives(client):
    assert client.get("/healthz").json() == {"ok": True}


@pytest.mark.django_db(transaction=True)
def test_readyz_checks_the_database_and_refuses_while_draining(client, monkeypatch):
    reply = client.get("/readyz")
    assert reply.status_code == 200
    assert reply.json() == {
        "ready": True,
        "database": True,
        "redis": True,  # no REDIS_URL: nothing to reach
        "accepting_turns": True,
    }

    monkeypatch.setattr(runner, "closing", True)
    reply = client.get("/readyz")
    assert reply.status_code == 503 and reply.json()["accepting_turns"] is False


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # the discard port: nothing listens

    reply = client.get("/readyz")

    assert reply.status_code == 503 and reply.json()["redis"] is False


def test_missing_system_packages_get_one_line_with_the_install_command(monkeypatch):
    monkeypatch.setattr(cluster.shutil, "which", lambda *args, **kwargs: None)
    monkeypatch.delenv("REDIS_URL", raising=False)

    with pytest.raises(CommandError) as raised:
        call_command("cluster", "--workers", "2")

    assert str(raised.value) == (
        "make run WORKERS=2 needs nginx-light, redis-server: "
        "sudo apt-get install -y nginx-light redis-server"
    )


@pytest.mark.django_db(transaction=True)
def test_a_failing_readiness_is_logged_once_not_once_per_probe(
    client, settings, caplog, monkeypatch
):
    # Each failed probe logged "Service Unavailable: /readyz" at ERROR (django.request):
    # a prober every few seconds wrote a line each for a whole outage.
    monkeypatch.setattr(health, "_failing", frozenset())  # as a fresh process starts
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # the discard port: nothing listens
    with caplog.at_level("INFO"):
        replies = [client.get("/readyz").status_code for _ in range(3)]
        settings.REDIS_URL = ""
        back = client.get("/readyz").status_code

    assert replies == [503, 503, 503] and back == 200
    assert not [r for r in caplog.records if r.name == "django.request"]
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "docent.health"]
    assert said == [("WARNING", said[0][1]), ("INFO", "ready again")]
    # With why: refused, slow or out of slots are three different nights for the operator.
    assert said[0][1].startswith("not ready: redis (Error 111 connecting to 127.0.0.1:9.")


@pytest.mark.django_db(transaction=True)
def test_a_probe_failing_while_the_model_loads_at_start_is_info_until_it_has_loaded(
    client, settings, caplog, monkeypatch
):
    # The warm-up thread held the GIL past the 2 s Redis ping: every cluster start said
    # "not ready: redis" at WARNING, Redis up all along.
    from ops import loop_lag

    monkeypatch.setattr(health, "_failing", frozenset())
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # the discard port: nothing listens
    with caplog.at_level("INFO"):
        loop_lag.warming_up.set()
        try:
            starting = client.get("/readyz").status_code
        finally:
            loop_lag.warming_up.clear()
        after = client.get("/readyz").status_code  # still failing once the model has loaded

    assert starting == after == 503
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "docent.health"]
    assert [(level, message.split(" (")[0]) for level, message in said] == [
        ("INFO", "not ready yet, loading the embedding model at start: redis"),
        ("WARNING", "not ready: redis"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_database_that_refuses_is_not_ready_and_the_line_says_why(monkeypatch, caplog):
    # The fault caused for real: the connection pointed at a port nothing listens on.
    from django.db import connection

    monkeypatch.setattr(health, "_failing", frozenset())
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", "9")
    connection.close()
    try:
        with caplog.at_level("WARNING"):
            ok = health._database_ok()
            health._log_change(frozenset({"database"}))
    finally:
        monkeypatch.undo()
        connection.close()

    assert ok is False
    said = [r.getMessage() for r in caplog.records if r.name == "docent.health"]
    assert len(said) == 1 and said[0].startswith("not ready: database (")
    assert "127.0.0.1" in said[0] and "\n" not in said[0]
