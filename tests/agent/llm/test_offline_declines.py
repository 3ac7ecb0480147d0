"""The offline model's declines name the nearest article as a link, and still decline."""

import pytest

from agent.answered import is_decline
from agent.llm.offline_declines import _no_figure, _not_mentioned

NEAREST = {"article_id": 4, "title": "Cancellation [and] timeouts", "url": "/articles/cancel/"}
LINK = "[Cancellation (and) timeouts](/articles/cancel/)"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_name_no_article_mentions_links_the_nearest_article_and_declines(lang):
    # "The nearest is “取消与超时…”" named the article in plain text: no link to go and read it.
    answer = _not_mentioned(lang, "1006", NEAREST, part="")
    assert LINK in answer
    assert is_decline(answer)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_figure_no_article_gives_links_the_nearest_article_and_declines(lang):
    answer = _no_figure(lang, NEAREST, part="")
    assert LINK in answer
    assert is_decline(answer)


def test_a_declined_part_still_names_the_part_not_an_article():
    assert "/articles/" not in _not_mentioned("en", "1006", NEAREST, part="and the close code?")
