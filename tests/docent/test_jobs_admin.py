"""The task queue's admin pages keep to the site's CSP: no inline styles to refuse."""

import re

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


@pytest.fixture
def job_id() -> int:
    # procrastinate's own procedure, as the worker defers a job; then the events a run leaves.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW('maintenance', 'agent.spool_drain', 0,"
            " NULL, 'spool-drain', '{\"timestamp\": 1796180520}', NULL)"
            "::procrastinate_job_to_defer_v1])"
        )
        (ids,) = cursor.fetchone()
        cursor.execute(
            "UPDATE procrastinate_jobs SET status = 'succeeded', attempts = 2 WHERE id = %s",
            [ids[0]],
        )
    return ids[0]


def test_the_job_list_and_a_job_page_have_no_inline_styles(staff_client, job_id):
    for url in (
        "/admin/procrastinate/procrastinatejob/",
        f"/admin/procrastinate/procrastinatejob/{job_id}/change/",
    ):
        response = staff_client.get(url)
        assert response.status_code == 200
        html = response.content.decode()
        assert "spool_drain" in html
        assert STYLE_ATTRIBUTE.findall(html) == []
        # Their replacements are in the site's stylesheet, which the page links.
        assert "admin/docent-admin.css" in html

    listing = staff_client.get("/admin/procrastinate/procrastinatejob/").content.decode()
    assert '<pre class="dc-job-args">{&quot;timestamp&quot;: 1796180520}</pre>' in listing
    assert '<ul class="dc-job-summary">' in listing and "<strong>Attempts:</strong> 2" in listing


def test_a_job_event_of_seconds_ago_says_just_now(staff_client, job_id):
    # timesince counts whole minutes: the job deferred a moment ago read "0 minutes ago".
    listing = staff_client.get("/admin/procrastinate/procrastinatejob/").content.decode()
    summary = listing.split('<ul class="dc-job-summary">')[1].split("</ul>")[0]

    assert "just now</strong>" in summary, summary
    assert not re.search(r"\b0\s+minutes", summary), summary
