"""The admin in the viewer's time zone: the cookie the browser sets, checked by the middleware."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from tests.agent.admin.factories import make_conversation

pytestmark = pytest.mark.django_db

COOKIE = "docent_time_zone"


@pytest.fixture
def late(db):
    # 20:30 UTC on 1 Dec is 04:30 on 2 Dec in Shanghai, 15:30 on 1 Dec in New York.
    return make_conversation(page="late", created_at=datetime(2026, 12, 1, 20, 30, tzinfo=UTC))


@pytest.mark.parametrize(
    ("zone", "shown", "label"),
    [
        ("Asia/Shanghai", "Dec 2, 04:30", "Time zone: Asia/Shanghai (UTC+8)"),
        ("America/New_York", "Dec 1, 15:30", "Time zone: America/New_York (UTC-5)"),
        ("Asia/Kolkata", "Dec 2, 02:00", "Time zone: Asia/Kolkata (UTC+5:30)"),
        # Not a name of the tz database: UTC, and said so.
        ("../../etc/passwd", "Dec 1, 20:30", "Time zone: UTC"),
        ("Mars/Olympus_Mons", "Dec 1, 20:30", "Time zone: UTC"),
        ("", "Dec 1, 20:30", "Time zone: UTC"),
    ],
)
def test_the_lists_are_in_the_zone_the_cookie_names(staff_client, late, zone, shown, label):
    staff_client.cookies[COOKIE] = zone
    html = staff_client.get("/admin/agent/conversation/").content.decode()

    assert f">{shown}</a>" in html
    assert label in html
    written = "UTC" if label.endswith("UTC") else zone  # what the page says it was written in
    assert f'<meta name="docent-time-zone" content="{written}"' in html


def test_the_blog_stays_in_utc(client, late):
    client.cookies[COOKIE] = "Asia/Shanghai"
    response = client.get("/")
    assert response.status_code == 200
    assert b"docent-time-zone" not in response.content


def test_the_page_is_read_again_only_when_it_was_a_signed_in_get(staff_client):
    login = Client().get("/admin/login/").content.decode()  # signed out
    index = staff_client.get("/admin/").content.decode()

    assert 'data-reload="false"' in login and "Time zone:" not in login
    assert 'data-reload="true"' in index
