"""The admin's sign-in refusal is a page people can read, in their language."""

import pytest
from django.contrib.auth import get_user_model

from agent.shared import state_reset

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


@pytest.fixture(autouse=True)
def _fresh_limits(settings):
    settings.ADMIN_LOGIN_ATTEMPTS = 2
    state_reset()
    yield
    state_reset()


def sign_in_three_times(client, **headers):
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    form = {"username": "editor", "password": "wrong"}
    for _ in range(2):
        assert client.post(LOGIN, form, **headers).status_code == 200  # the form, with its error
    return client.post(LOGIN, {"username": "editor", "password": "right-pw"}, **headers)


def test_the_refusal_is_an_admin_page_with_the_wait_in_minutes(client):
    response = sign_in_three_times(client)

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 60
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert '"detail"' not in page  # it was the API's JSON, shown raw in the browser
    assert "Too many sign-in attempts" in page
    assert "Try again in 15 minutes." in page  # not "in 900 s"
    assert 'href="/admin/login/"' in page


def test_the_refusal_speaks_chinese_to_a_chinese_browser(client):
    response = sign_in_three_times(client, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")

    assert response.status_code == 429
    page = response.content.decode()
    assert "登录尝试次数过多" in page
    assert "15 分钟" in page
    assert "Too many" not in page
