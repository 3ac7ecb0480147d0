"""Finding 3: DEBUG never reaches the network by accident, and its pages never reach a client."""

import os
import subprocess
import sys

import httpx
import pytest

from testing_support.live_server import ROOT, free_port
from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

DEBUG_TEXT = "DEBUG = True"
NETWORK = "0.0.0.0"  # noqa: S104 - the attack is serving the network
UNSET = ("DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "HOST")


def bare_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in UNSET}
    return {**env, **extra}


def test_make_run_on_a_network_host_refuses_without_a_key_and_hosts():
    port = str(free_port())
    result = subprocess.run(
        ["make", "--no-print-directory", "run", "HOST=0.0.0.0", f"PORT={port}"],
        cwd=ROOT,
        env=bare_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("docent:")]
    assert lines == [
        "docent: error: HOST=0.0.0.0 is not loopback, so DEBUG is off: set DJANGO_SECRET_KEY "
        "to a random string of 50+ characters and DJANGO_ALLOWED_HOSTS to the site's host names "
        "(comma-separated) (or DJANGO_DEBUG=true to serve debug pages anyway)."
    ]
    assert "Traceback" not in result.stderr


def test_a_network_host_with_key_and_hosts_runs_with_debug_off():
    code = "from django.conf import settings; print(settings.DEBUG)"
    env = bare_env(HOST=NETWORK, DJANGO_SECRET_KEY=PROD_KEY, DJANGO_ALLOWED_HOSTS="blog.example")
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr


def test_serve_on_a_network_host_without_host_env_refuses_debug():
    result = subprocess.run(
        [sys.executable, "manage.py", "serve", "--no-prepare", "--host", NETWORK, "--port", "1"],
        cwd=ROOT,
        env=bare_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "--host 0.0.0.0 is not loopback" in result.stderr


def test_debug_on_warns_loudly_at_start(serve):
    server = serve("debug-warning")

    assert "DEBUG IS ON" in server.output()


def test_the_debug_page_never_reaches_a_non_loopback_client(serve):
    # The client's address is 203.0.113.7 as a trusted proxy on loopback reports it.
    server = serve("debug-guard", DJANGO_TRUSTED_PROXIES="1")
    remote = {"X-Forwarded-For": "203.0.113.7"}

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        local_404 = client.get("/no-such-page/")  # the control: loopback sees the debug page
        remote_404 = client.get("/no-such-page/", headers=remote)
        remote_no_slash = client.get("/no-such-page", headers=remote)
        remote_host = client.get("/", headers={**remote, "Host": "evil.example"})
        remote_api = client.get("/api/no-such-endpoint", headers=remote)

    assert DEBUG_TEXT in local_404.text
    for response in (remote_404, remote_no_slash, remote_host, remote_api):
        assert response.status_code in {400, 404}
        assert DEBUG_TEXT not in response.text
        assert "urlpatterns" not in response.text and "URLconf" not in response.text
    assert remote_host.status_code == 400
    # The site's own 400 page (it was the bare words "Bad request."), not the 78 KB debug page
    # of settings and paths, and without the refused Host written back.
    assert "The request could not be read" in remote_host.text
    assert len(remote_host.content) < 5000 and "evil.example" not in remote_host.text


def test_a_tunnel_in_front_of_the_clusters_proxy_does_not_pass_the_debug_pages_on(serve):
    # `make run WORKERS=2` (DEBUG on: a loopback HOST) behind ngrok or an outer proxy on the
    # same machine: its nginx (a trusted proxy) appends the tunnel's loopback address, so the
    # workers read every visitor as 127.0.0.1 and each got the debug pages.
    server = serve("debug-behind-a-tunnel", DJANGO_TRUSTED_PROXIES="1")
    nginx = {"X-Forwarded-For": "127.0.0.1"}  # what nginx sends for `make run`'s own user
    tunnel = {"X-Forwarded-For": "203.0.113.7, 127.0.0.1"}  # for a visitor through the tunnel

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        local_404 = client.get("/no-such-page/", headers=nginx)
        relayed_404 = client.get("/no-such-page/", headers=tunnel)
        relayed_api = client.get("/api/no-such-endpoint", headers=tunnel)

    assert DEBUG_TEXT in local_404.text
    for response in (relayed_404, relayed_api):
        assert response.status_code == 404
        assert DEBUG_TEXT not in response.text
        assert "urlpatterns" not in response.text and "URLconf" not in response.text


def test_a_proxy_in_front_of_make_run_does_not_pass_the_debug_pages_on(serve):
    # `make run` (DEBUG on: a loopback HOST) behind nginx, cloudflared or ngrok on the same
    # machine: every visitor talks to daphne from loopback. Judged by address alone each one
    # got the debug pages; the public Host a proxy passes on drew a 78 KB page of settings.
    server = serve("debug-behind-a-proxy")
    signs = [
        {"X-Forwarded-For": "203.0.113.7"},
        {"X-Forwarded-Proto": "https"},
        {"X-Real-IP": "203.0.113.7"},
        {"Forwarded": "for=203.0.113.7"},
        {"Via": "1.1 proxy"},
        {"CF-Connecting-IP": "203.0.113.7"},
        {"Host": "docent.example.com"},
    ]

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        local_404 = client.get("/no-such-page/")  # the control: `make run`'s own user
        proxied = [
            client.get(path, headers=sign) for sign in signs for path in ("/no-such-page/", "/")
        ]
        static = client.get("/static/no-such-file.js", headers=signs[0])

    assert DEBUG_TEXT in local_404.text
    for response in [*proxied, static]:
        assert DEBUG_TEXT not in response.text and "DisallowedHost" not in response.text
        assert "urlpatterns" not in response.text and "URLconf" not in response.text
    assert [r.status_code for r in proxied[-2:]] == [400, 400]  # the foreign Host, plainly
