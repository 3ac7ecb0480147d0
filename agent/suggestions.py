"""What a decline offers instead: three articles to ask about, in the decline's language.

"I couldn't find that in this blog" left the reader with nothing to try (walk 23). A declined
turn now ends with three articles as links, offered to ask about instead: the nearest to the
question first, those in the decline's language before the others (not called "near": for
bread, the nearest are not). A link in a decline is no citation (agent.loop._finish): no
Sources list, and the turn stays unanswered for the editors' backlog. Any model's decline gets
them, in the decline's own language: the question's, or the page's for a question of bare
terms ("sourdough" on the Chinese page is declined in Chinese).
"""

from __future__ import annotations

import re

from agent.llm.offline_render import article_link
from agent.llm.offline_replies import OFFER_LEAD
from agent.ratelimit import search_allow
from agent.tools._db import off_loop
from agent.tools._visitor import visitor_address
from ops.metrics import refusal_count

# The offer's words (OFFER_LEAD) live beside the declines: the offline model reads them back.
SUGGESTED = 3
# Wider than SUGGESTED: the nearest in the decline's language come first.
_CANDIDATES = 10
_JOIN = {"en": ", ", "zh": "、"}
# A decline that names an article already (the offline model's "The nearest is [X](…)").
_LINKS_AN_ARTICLE = re.compile(r"\]\(/articles/")


async def decline_suggestions(question: str, answer: str) -> str:
    """The sentence offering the nearest articles, or "" (none published, the decline links an
    article already, or the visitor's search allowance is spent)."""
    if _LINKS_AN_ARTICLE.search(answer) or not await _allowance_spend(question):
        return ""
    return await off_loop(_suggestions)(question, answer)


async def _allowance_spend(question: str) -> bool:
    """Count the offer's search on the visitor's search allowance, as the model's own searches
    are; False when it is spent (the decline then stands without the offer).

    The offer embeds the whole question: uncounted, a model that declined without searching let
    an address embed a 4,000-character question on every message it could send (red team 37).
    """
    address = visitor_address.get()
    if address is None:  # outside a visitor's turn (tests, the evaluation's direct calls)
        return True
    refusal = await search_allow(client_ip=address, query=question)
    if refusal is not None:
        refusal_count(reason=refusal.reason, address=address)
        return False
    return True


def _suggestions(question: str, answer: str) -> str:
    from blog.chunking import language_detect
    from blog.script import is_traditional, to_taiwan
    from blog.search import article_search_vector

    language = language_detect(answer)
    hits = article_search_vector(query=question, limit=_CANDIDATES, min_relevance=0.0)
    hits = sorted(hits, key=lambda hit: hit.language != language)[:SUGGESTED]  # stable
    if not hits:
        return ""
    links = _JOIN[language].join(article_link({"title": h.title, "url": h.url}) for h in hits)
    offer = OFFER_LEAD[language].format(links=links)
    # A reader in Taiwan was declined in Traditional and offered in Simplified ("可以改问这几篇
    # 文章"): the offer follows the decline's script and words, as the offline model's answers do.
    return to_taiwan(offer) if language == "zh" and is_traditional(answer) else offer
