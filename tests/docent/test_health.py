"""/healthz, /readyz and the cluster command's one clear line for missing system packages."""

import pytest
from django.core.management import CommandError, call_command

from agent.runner import runner
from docent import cluster


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
