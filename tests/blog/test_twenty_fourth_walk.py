"""Walk 24, the authors' admin: what the article list says about a post with a later date."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from blog.models import Article

pytestmark = pytest.mark.django_db


def _statuses(page: str) -> dict[str, str]:
    rows = re.findall(
        r'<th class="field-title"><a [^>]*>([^<]+)</a></th>.*?'
        r'<td class="field-status_shown">(.*?)</td>',
        page,
        flags=re.S,
    )
    return {title: re.sub(r"<[^>]+>", "", cell) for title, cell in rows}


def test_the_list_says_scheduled_for_a_post_with_a_later_date(staff_client, make_article):
    # It said "Published" (and the Index column "up to date"): its author asked the assistant
    # about it and was told the blog had nothing on it.
    now = timezone.now()
    make_article(title="Next week", published_at=now + timedelta(days=7))
    make_article(title="Yesterday", published_at=now - timedelta(days=1))
    make_article(title="A draft", status=Article.Status.DRAFT)

    page = staff_client.get("/admin/blog/article/").content.decode()

    assert _statuses(page) == {
        "Next week": "Scheduled",
        "Yesterday": "Published",
        "A draft": "Draft",
    }
    assert 'title="Scheduled for ' in page  # when, on hovering the word


def test_the_chinese_list_says_scheduled_too(staff_client, make_article):
    make_article(title="Next week", published_at=timezone.now() + timedelta(days=7))

    page = staff_client.get("/admin/blog/article/", HTTP_ACCEPT_LANGUAGE="zh-hans").content
    assert _statuses(page.decode()) == {"Next week": "定时发表"}
