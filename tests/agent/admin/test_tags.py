"""The tags list says how much each tag is used: its articles, and the conversations they drew."""

import re

import pytest

from tests.agent.admin.factories import make_conversation

pytestmark = pytest.mark.django_db


def row(html: str, name: str) -> str:
    """The changelist row of the tag called `name`."""
    return next(r for r in html.split("<tr") if f">{name}</a></th>" in r)


def cell(row_html: str, field: str) -> str:
    return re.search(rf'<td class="field-{field}">(.*?)</td>', row_html).group(1)


def test_each_tag_counts_its_articles_and_the_conversations_started_on_them(
    staff_client, make_article
):
    # The list was names and slugs: a tag nobody reads looked as live as the busiest one.
    make_article(title="Loops", slug="loops", tags=["agents", "limits"])
    make_article(title="Budgets", slug="budgets", tags=["limits"], status="draft")
    make_article(title="Unused", slug="unused", tags=["spare"])
    for page in ["loops", "loops", "budgets", "elsewhere"]:
        make_conversation(page=page)

    html = staff_client.get("/admin/blog/tag/").content.decode()

    limits = row(html, "limits")
    assert re.fullmatch(r'<a href="/admin/blog/article/\?tags__id__exact=\d+">2</a>',
                        cell(limits, "article_total"))  # fmt: skip
    assert '?tag=limits"' in cell(limits, "conversation_total")
    assert ">3</a>" in cell(limits, "conversation_total")  # on a draft's preview too
    assert ">2</a>" in cell(row(html, "agents"), "conversation_total")
    assert cell(row(html, "spare"), "conversation_total") == "0"  # nothing to link to


def test_the_conversation_list_filters_by_the_tag_of_the_article_it_started_on(
    staff_client, make_article
):
    make_article(title="Loops", slug="loops", tags=["agents"])
    make_article(title="Budgets", slug="budgets", tags=["limits"])
    on_loops, on_budgets = make_conversation(page="loops"), make_conversation(page="budgets")

    html = staff_client.get("/admin/agent/conversation/?tag=agents").content.decode()

    assert str(on_loops.pk) in html and str(on_budgets.pk) not in html
    chinese = staff_client.get("/admin/blog/tag/", headers={"accept-language": "zh-CN"})
    assert "对话" in chinese.content.decode() and "Conversations" not in chinese.content.decode()
