"""The admin in Chinese: the report pages, the transcript and the lists, with no English left."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from tests.agent.admin.factories import NO_RESULTS, make_conversation, make_turn, search_hits

pytestmark = pytest.mark.django_db

CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}
# Words of the admin's own that reached the Chinese pages in English before.
ENGLISH = [
    "Unanswered", "Dashboard", "Conversations", "Tool calls", "Turns", "Started",
    "Hide them", "Show them", "Asked while indexing", "Answers visitors voted down",
    "No answer has been voted down", "Median", "Vote rate", "Tokens", "Hit the step limit",
    "Done", "Thumbs", "First question", "Last turn", "By model", "Assistant", "Not answered",
    "Searches what visitors asked", " ago", " in · ", "Articles", "Publishing", "Search index",
    "Reindex", "up to date", "Docent admin", "Filter by", "Select an option", "Conversation",
    "Turn ", " items",
]  # fmt: skip


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no tags, scripts, styles or attributes."""
    html = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def english_left(staff_client, url: str) -> list[str]:
    response = staff_client.get(url, headers=CHINESE)
    assert response.status_code == 200, url
    text = visible_text(response.content.decode())
    return [word for word in ENGLISH if word in text]


@pytest.fixture
def asked():
    """A decline asked while indexing (down-voted), and an answered turn."""
    conversation = make_conversation(page="why-step-limits-matter")
    started = timezone.now() - timedelta(minutes=5)
    make_turn(conversation, index=1, user_message="步数上限是什么？", answer="", answered=False,
              index_incomplete=True, started_at=started, vote="down", feedback_at=started,
              tool_calls=[{"arguments": {"query": "步数上限"}, "result": NO_RESULTS}])  # fmt: skip
    make_turn(conversation, index=2, user_message="为什么要限制步数？",
              started_at=datetime(2026, 11, 20, tzinfo=UTC),
              tool_calls=[{"result": search_hits(5, excerpt="HNSW " * 60)}])  # fmt: skip
    return conversation


def test_the_report_pages_and_the_transcript_are_all_chinese(staff_client, asked, make_article):
    article = make_article(title="Hello")
    for url in [
        "/admin/",
        "/admin/agent/conversation/dashboard/",
        "/admin/agent/conversation/unanswered/",
        "/admin/agent/conversation/unanswered/?while_indexing=hide",
        f"/admin/agent/conversation/{asked.pk}/change/",
        "/admin/agent/conversation/",
        "/admin/agent/turn/?vote__exact=down",
        "/admin/agent/toolcall/",
        f"/admin/agent/turn/{asked.turns.first().pk}/change/",
        "/admin/blog/article/",
        f"/admin/blog/article/{article.pk}/change/",
    ]:
        assert english_left(staff_client, url) == [], url
    index = visible_text(staff_client.get("/admin/", headers=CHINESE).content.decode())
    assert "轮次 查看 仪表盘 查看 未能回答的问题" in index  # the Assistant app, its own words


def test_the_unanswered_page_in_chinese(staff_client, asked):
    page = staff_client.get("/admin/agent/conversation/unanswered/", headers=CHINESE)
    text = visible_text(page.content.decode())

    assert "未能回答的问题" in text and "索引期间提问" in text and "隐藏这些问题" in text
    assert "访客点踩的回答" in text
    # "5 minutes ago" reads as one phrase, not "5 分钟 前".
    assert re.search(r"最近一次提问在 5\s分钟前", text), text
    hidden = staff_client.get(
        "/admin/agent/conversation/unanswered/?while_indexing=hide", headers=CHINESE
    )
    assert "已隐藏索引尚未完成时提出的问题。" in visible_text(hidden.content.decode())


def test_dates_in_the_lists_are_written_the_chinese_way(staff_client, asked, make_article):
    make_article(title="Hello", published_at=datetime(2026, 11, 18, 9, tzinfo=UTC))
    turns = visible_text(staff_client.get("/admin/agent/turn/", headers=CHINESE).content.decode())
    articles = staff_client.get("/admin/blog/article/", headers=CHINESE).content.decode()

    assert "11月20日" in turns and "十一月" not in turns  # was "十一月 20, 12:00"
    assert "2026年11月18日" in visible_text(articles)


def test_the_article_lists_date_column_is_not_named_like_the_status(staff_client, make_article):
    # Both were "已发布" ("published", the status), so a column of dates read as a second status.
    make_article(title="Hello")
    html = staff_client.get("/admin/blog/article/", headers=CHINESE).content.decode()

    header = re.search(r'<th scope="col" class="[^"]*column-published[^"]*">(.*?)</th>', html, re.S)
    assert visible_text(header.group(1)).strip() == "发布于"
    assert "已发布" in visible_text(html)  # the status itself


def test_the_dashboards_latency_cards_name_a_time(staff_client, asked):
    # "首个令牌中位数" read as "the median first token", not the time it took.
    page = staff_client.get("/admin/agent/conversation/dashboard/?days=90", headers=CHINESE)
    text = visible_text(page.content.decode())

    assert "轮次耗时中位数" in text and "首个令牌耗时中位数" in text


@pytest.mark.parametrize(
    ("headers", "asked", "voted", "minutes"),
    [
        (CHINESE, "最近一次提问就在刚刚", "刚刚投票", "0 分钟"),
        ({}, "last asked just now", "voted just now", "0 minutes"),
    ],
)
def test_what_just_happened_says_just_now_not_0_minutes_ago(
    staff_client, headers, asked, voted, minutes
):
    # timesince counts whole minutes: a question asked seconds ago read "0 分钟前".
    now = timezone.now() - timedelta(seconds=20)
    make_turn(make_conversation(), user_message="刚才的问题", answer="", answered=False,
              started_at=now, vote="down", feedback_at=now)  # fmt: skip

    page = staff_client.get("/admin/agent/conversation/unanswered/", headers=headers)
    text = visible_text(page.content.decode())

    assert asked in text and voted in text
    assert minutes not in text


@pytest.mark.parametrize(
    ("headers", "units", "other"),
    [
        (CHINESE, ["毫秒", "秒"], r"\d (ms|s)\b"),
        ({"accept-language": "en"}, ["ms", "s"], "毫秒|\\d 秒"),
    ],
)
def test_durations_read_in_the_pages_language(staff_client, asked, headers, units, other):
    # The Chinese admin showed "900 ms" while the chat panel and the field names said "毫秒".
    slow = asked.turns.get(index=2)
    slow.duration_ms = 1500
    slow.save(update_fields=["duration_ms"])
    for url in [
        "/admin/agent/conversation/dashboard/",
        f"/admin/agent/conversation/{asked.pk}/change/",
        "/admin/agent/turn/",
        "/admin/agent/toolcall/",
        f"/admin/agent/turn/{slow.pk}/change/",
    ]:
        response = staff_client.get(url, headers=headers)
        text = visible_text(response.content.decode())
        assert re.search(rf"\d {units[0]}", text), url
        assert not re.search(other, text), (url, re.search(other, text))
    transcript = staff_client.get(f"/admin/agent/conversation/{asked.pk}/change/", headers=headers)
    assert re.search(rf"1\.50 {units[1]}\b", visible_text(transcript.content.decode()))
