"""Filters typed into an admin URL get the admin's "invalid lookup" answer, never a 500.

The admin builds a filter from any query parameter that names a field lookup and checks it
only when the query runs: `?created_at__year=99999` was a 500 (with DEBUG on, a traceback).
"""

import pytest
from django.contrib.auth import get_user_model

from tests.security.clients import admin_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

ATTACKS = [
    "/admin/agent/conversation/?created_at__year=99999",
    "/admin/agent/conversation/?created_at__day=99&created_at__month=99&created_at__year=99999",
    "/admin/agent/turn/?created_at__year=0",
    "/admin/agent/toolcall/?started_at__year=99999",
    "/admin/blog/article/?published_at__year=99999",
    "/admin/blog/article/?published_at__year=99999&published_at__month=1",
]


def test_out_of_range_dates_in_changelist_filters_are_refused_politely(serve):
    get_user_model().objects.create_user(
        "boss", password="right-pw", is_staff=True, is_superuser=True
    )
    server = serve("admin-lookups")

    staff = admin_signed_in(server, username="boss", password="right-pw")
    answers = {path: staff.get(path) for path in ATTACKS}
    listing = staff.get("/admin/agent/conversation/")
    staff.close()

    for path, response in answers.items():
        assert response.status_code == 302, path
        assert response.headers["location"].endswith("?e=1"), path
    assert listing.status_code == 200
