"""A sign-in whose `next` is another site's lands in the admin, not on a 404.

A link to the real sign-in page carrying `?next=//evil.example` (or `https://`, `/\\`) is no
open redirect, as Django checks it; but it sent the editor to Django's default
/accounts/profile/, a page this site does not have.
"""

import httpx
import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db(transaction=True)

FOREIGN = ["//evil.example", "https://evil.example/", "/\\evil.example", "http:/evil.example"]


def signed_in_to(server, next_url: str) -> str:
    """Where the real sign-in form sends an editor who came with `next_url`."""
    with httpx.Client(base_url=server.url) as client:
        token = client.get("/admin/login/", params={"next": next_url}).cookies["csrftoken"]
        form = {"username": "editor", "password": "a-long-password", "next": next_url}
        answer = client.post(
            "/admin/login/",
            params={"next": next_url},
            data={**form, "csrfmiddlewaretoken": token},
            headers={"Referer": server.url + "/admin/login/"},
        )
    assert answer.status_code == 302, answer.status_code
    return answer.headers["Location"]


def test_a_foreign_next_signs_in_to_the_admin(serve):
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    server = serve("sign-in-next")

    landed = {next_url: signed_in_to(server, next_url) for next_url in [*FOREIGN, "/admin/blog/"]}

    # before: /accounts/profile/ (a 404) for each foreign one
    assert landed == {**dict.fromkeys(FOREIGN, "/admin/"), "/admin/blog/": "/admin/blog/"}
