"""The admin login page on a first run says how to get an account."""

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db

COMMAND = ".venv/bin/python manage.py createsuperuser"


def test_the_login_page_says_how_to_create_the_first_account_until_one_exists(client):
    page = client.get("/admin/login/").content.decode()
    assert "No admin account exists yet" in page and COMMAND in page
    assert 'id="login-form"' in page  # Django's own form is still there
    chinese = client.get("/admin/login/", headers={"accept-language": "zh-hans"}).content.decode()
    assert "还没有管理员账号" in chinese and COMMAND in chinese

    users = get_user_model().objects
    users.create_user("visitor", password="x")  # not staff: nobody can log in yet
    assert COMMAND in client.get("/admin/login/").content.decode()

    users.create_superuser("admin", password="x")
    page = client.get("/admin/login/").content.decode()
    assert COMMAND not in page and 'id="login-form"' in page


def test_the_hint_is_not_shown_to_the_network_with_debug_off(client, settings):
    # A visitor from elsewhere learnt the site was a fresh install with no account yet.
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver"]

    remote = client.get("/admin/login/", REMOTE_ADDR="203.0.113.9").content.decode()
    local = client.get("/admin/login/").content.decode()  # 127.0.0.1: the operator

    assert COMMAND not in remote and 'id="login-form"' in remote
    assert COMMAND in local


def test_start_up_prints_the_createsuperuser_hint_only_while_no_account_exists():
    # Every restart printed "Create an admin account" long after one had been created.
    from docent.startup import serve_ready_lines

    lines = serve_ready_lines(host="127.0.0.1", port=8000)
    assert lines[:2] == ["Docent is serving on http://127.0.0.1:8000/ (Ctrl-C stops)",
                         "Admin: http://127.0.0.1:8000/admin/"]  # fmt: skip
    assert COMMAND in lines[2]

    get_user_model().objects.create_superuser("admin", password="x")
    assert [
        line for line in serve_ready_lines(host="127.0.0.1", port=8000) if COMMAND in line
    ] == []


@pytest.mark.django_db(transaction=True)  # schema_current() closes the connection
def test_the_cluster_prints_the_hint_only_while_no_account_exists_too():
    # `make run WORKERS=n` printed "Create an admin account" on every start, as serve did.
    from docent.startup import cluster_ready_lines

    assert any(COMMAND in line for line in cluster_ready_lines(host="127.0.0.1", port=8000))
    get_user_model().objects.create_superuser("admin", password="x")
    lines = cluster_ready_lines(host="127.0.0.1", port=8000)
    assert lines[1] == "Admin: http://127.0.0.1:8000/admin/" and len(lines) == 2
