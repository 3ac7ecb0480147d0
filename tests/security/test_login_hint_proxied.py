"""The admin's "no account yet" hint is said to this machine only, not through a proxy on it.

The login page tells whoever runs a fresh install how to create the first account. It judged
"this machine" by the peer's address alone (and said it to anyone with DEBUG on), so a proxy
or tunnel on the same machine (nginx without DJANGO_TRUSTED_PROXIES, ngrok in front of the
cluster's nginx) passed it on to every visitor, DEBUG off too: the site was a fresh install
with no account, and here was the command. It is judged now as the debug pages judge it.
"""

import httpx
import pytest

from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)

HINT = "manage.py createsuperuser"


def test_a_proxy_on_this_machine_does_not_pass_the_hint_on_with_debug_off(serve):
    server = serve(
        "login-hint-proxied",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
    )

    with httpx.Client(base_url=server.url) as client:
        local = client.get("/admin/login/")  # the control: the operator, on this machine
        proxied = client.get("/admin/login/", headers={"X-Forwarded-For": "203.0.113.7"})

    assert HINT in local.text
    assert proxied.status_code == 200 and HINT not in proxied.text


def test_a_tunnel_in_front_of_a_trusted_proxy_does_not_get_the_hint_with_debug_on(serve):
    # `make run WORKERS=2`: DEBUG on, its nginx trusted; a tunnel on loopback in front of it.
    server = serve("login-hint-tunnel", DJANGO_TRUSTED_PROXIES="1")

    with httpx.Client(base_url=server.url) as client:
        local = client.get("/admin/login/", headers={"X-Forwarded-For": "127.0.0.1"})
        tunnelled = client.get(
            "/admin/login/", headers={"X-Forwarded-For": "203.0.113.7, 127.0.0.1"}
        )

    assert HINT in local.text
    assert tunnelled.status_code == 200 and HINT not in tunnelled.text
