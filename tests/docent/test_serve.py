"""`manage.py serve` as a real daphne process: client addresses behind a proxy."""

import json

import httpx
import pytest
from django.db import connection

from testing_support.live_server import LiveServer, database_url

pytestmark = pytest.mark.django_db(transaction=True)


def first_event(server: LiveServer, forwarded_for: str) -> dict:
    headers = {"X-Forwarded-For": forwarded_for}
    with httpx.Client(base_url=server.url, timeout=30) as client:  # a new session each time
        with client.stream("POST", "/api/chat", json={"content": "hi"}, headers=headers) as reply:
            line = next(line for line in reply.iter_lines() if line.startswith("data: "))
    return json.loads(line.removeprefix("data: "))


def _test_database_url() -> str:
    return database_url(connection.settings_dict["NAME"])


@pytest.mark.parametrize(("behind_proxy", "second"), [("true", "start"), ("false", "error")])
def test_the_per_ip_limit_uses_the_forwarded_address_only_behind_a_proxy(
    tmp_path, behind_proxy, second
):
    env = {"DJANGO_BEHIND_PROXY": behind_proxy, "AGENT_MESSAGES_PER_MINUTE_PER_IP": "1"}
    with LiveServer(f"proxy-{behind_proxy}", _test_database_url(), env, tmp_path) as server:
        first = first_event(server, "203.0.113.1")
        other_visitor = first_event(server, "203.0.113.2")

    assert first["type"] == "start"
    assert other_visitor["type"] == second
