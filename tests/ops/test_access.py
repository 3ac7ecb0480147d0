"""/metrics is not public: trusted networks (loopback by default) or the bearer token."""

import pytest

pytestmark = pytest.mark.django_db

OUTSIDE = "203.0.113.7"


def _get(client, remote: str = "127.0.0.1", **headers: str):
    return client.get("/metrics", REMOTE_ADDR=remote, headers=headers)


def test_loopback_scrapes_in_the_prometheus_text_format(client):
    response = _get(client)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    body = response.content.decode()
    assert "# TYPE docent_turns_total counter" in body
    assert "# TYPE docent_turn_first_token_seconds histogram" in body
    assert "docent_indexing_lag_seconds" in body


def test_other_addresses_are_refused(client):
    assert _get(client, OUTSIDE).status_code == 403
    assert _get(client, "not-an-ip").status_code == 403


def test_a_visitor_forwarded_by_a_local_proxy_is_refused(client):
    # nginx talks from loopback; the address it forwards is the one that counts.
    assert _get(client, **{"X-Forwarded-For": OUTSIDE}).status_code == 403
    assert _get(client, **{"X-Forwarded-For": f"127.0.0.1, {OUTSIDE}"}).status_code == 403
    assert _get(client, **{"X-Real-IP": OUTSIDE}).status_code == 403
    assert _get(client, **{"Forwarded": f"for={OUTSIDE}"}).status_code == 403
    assert _get(client, **{"X-Forwarded-For": "127.0.0.1"}).status_code == 200


def test_configured_networks_replace_loopback(client, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8", "fd00::/8"]
    assert _get(client, "10.1.2.3").status_code == 200
    assert _get(client, "fd00::5").status_code == 200
    assert _get(client).status_code == 403


def test_the_bearer_token_opens_it_from_anywhere(client, settings):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    assert _get(client, OUTSIDE, Authorization="Bearer s3cret-scrape-token").status_code == 200
    assert _get(client, OUTSIDE, Authorization="Bearer wrong").status_code == 403
    assert _get(client, OUTSIDE).status_code == 403


def test_only_get(client):
    assert client.post("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 405
