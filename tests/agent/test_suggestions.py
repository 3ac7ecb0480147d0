"""What a decline offers instead: published articles, in the decline's language."""

import re

import pytest
from channels.db import database_sync_to_async

from agent.llm.offline_replies import OFFER_LEAD as LEAD
from agent.suggestions import decline_suggestions
from blog.models import Article

pytestmark = pytest.mark.django_db(transaction=True)

# Each language's article first, then the other language's (drafts never).
OTHERS = {"step-limits": ["bu-shu-shang-xian"], "bu-shu-shang-xian": ["step-limits"]}


def _index(make_article) -> dict[str, Article]:
    from blog.indexing import chunk_reindex

    articles = {
        "en": make_article(
            title="Step limits", slug="step-limits", body="## Why\n\nA cap of five model calls."
        ),
        "zh": make_article(
            title="步数上限", slug="bu-shu-shang-xian", body="## 为什么\n\n每轮最多调用五次模型。"
        ),
        "draft": make_article(
            title="Secret roadmap",
            slug="secret-roadmap",
            status=Article.Status.DRAFT,
            body="## Plan\n\nThe zeppelin launch happens in March.",
        ),
    }
    for article in articles.values():
        chunk_reindex(article=article)
    return articles


@pytest.mark.parametrize(
    ("answer", "language", "first"),
    [
        ("I couldn't find anything about that in this blog's articles.", "en", "step-limits"),
        ("我在这个博客的文章里没有找到相关内容。", "zh", "bu-shu-shang-xian"),
    ],
)
async def test_a_decline_offers_published_articles_in_its_own_language_first(
    make_article, answer, language, first
):
    await database_sync_to_async(_index)(make_article)

    offered = await decline_suggestions("sourdough bread", answer)

    assert offered.startswith(LEAD[language].split("{")[0])
    assert re.findall(r"\(/articles/([\w-]+)/\)", offered) == [first, *OTHERS[first]]
    assert "secret-roadmap" not in offered  # drafts are never offered


async def test_a_traditional_decline_is_offered_in_traditional(make_article):
    await database_sync_to_async(_index)(make_article)

    declined = "我在這個部落格的文章裡沒有找到相關內容。"
    offered = await decline_suggestions("台北今天天氣如何？", declined)

    # Before: "可以改问这几篇文章：[步数上限]…", Simplified under a Traditional decline.
    lead = "可以改問這幾篇文章：[步數上限](/articles/bu-shu-shang-xian/)"
    assert offered.startswith(lead), offered


async def test_a_decline_that_links_an_article_already_gets_nothing_more(make_article):
    await database_sync_to_async(_index)(make_article)

    answer = "That figure isn't given. The nearest is [Step limits](/articles/step-limits/)."
    assert await decline_suggestions("how many calls in 2019?", answer) == ""
