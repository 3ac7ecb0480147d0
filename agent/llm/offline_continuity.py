"""Conversation continuity: a question after an answer whose own search found nothing.

"What does SynchronousOnlyOperation mean?" right after an answer quoting the Channels article
names a subject of its own, so it is searched alone, and alone it ranks that article under the
bar. "它比二元切分准在哪里？" after an answer on zhparser leans on it, and searched together with
"zhparser 怎么安装？" the two questions' words pulled the full-text search article under the bar.
The conversation is evidence the search cannot weigh: a librarian who has just read an article
to the reader reads the next question against that article first.

So when every search of a question declines, and the answer just before it cited articles, the
question is searched once more the other way: with the question it follows when it was searched
alone, alone when it was searched with it. That search is used only when its best hit is an
article the previous answer cited (or the page on screen), and the question uses no word the
blog never writes ("does it work with MongoDB?"): then the answer continues from that article.
The article is then read, and the question must be about what it says: every word of its own
(not the question before's, not the words that only ask: "mean", "explain") is in the article,
and for a Chinese question every name in letters and one pair of characters at least. "how much
does a managed pgvector instance cost per month?" after an answer on HNSW's parameters reads
the pgvector article again, which says nothing of instances or months, and is declined.
A question that opens by changing the subject ("unrelated, but…", "换个话题：…") inherits
nothing, and neither does one after a decline (nothing was cited).
"""

from __future__ import annotations

from functools import cache

from agent.llm.offline_follow_up import (
    _GRAMMAR,
    changes_topic,
    cited_articles,
    cited_before,
    is_follow_up,
)
from agent.llm.offline_names import mentions
from agent.llm.offline_replies import found_nothing
from agent.llm.offline_text import terms
from agent.llm.offline_turn import MAX_QUERY, _Turn


def continuity_query(turn: _Turn) -> str:
    """The search reading the question the other way, or "" when the conversation gives no
    evidence: nothing answered and cited just before, or the question changes the subject."""
    if not turn.earlier or not turn.leans_on or changes_topic(turn.question):
        return ""
    answer = turn.previous_answer
    if found_nothing(answer) or not cited_articles(answer):
        return ""
    if is_follow_up(turn):
        return turn.question[:MAX_QUERY]  # searched with the question before: now alone
    return f"{turn.leans_on} {turn.question}"[-MAX_QUERY:]


def continued(turn: _Turn, hits: list[dict]) -> bool:
    """Whether the other reading's hits continue the conversation: its best hit is an article
    the previous answer cited, or the page on screen, and no word of the question is unknown to
    the blog (the hit's unknown_words, this question's only)."""
    if not hits:
        return False
    best = hits[0]
    if not (cited_before(turn.previous_answer, best) or best.get("article_id") == turn.page):
        return False
    asked = turn.question.lower()
    unknown = best.get("unknown_words") or ()
    return not any(isinstance(w, str) and mentions(asked, w.lower()) for w in unknown)


# Words that only ask ("what does X mean?", "explain Y"): no subject an article must name.
_ASKING = "mean means meaning stand explain example detail again tell show more exactly work"


def covers(turn: _Turn, body: str) -> bool:
    """Whether the article read says what the question asks about: each of its own words (in a
    Chinese question, each name in letters, and one character pair at least)."""
    own = {
        t for t in terms(turn.question) - terms(turn.leans_on) - _asking() if not _GRAMMAR & set(t)
    }
    said = terms(body)
    letters = {t for t in own if t.isascii()}
    pairs = own - letters
    if not letters <= said:
        return False
    return not pairs or bool(pairs & said)


@cache
def _asking() -> frozenset[str]:
    return frozenset(t for word in _ASKING.split() for t in terms(word))
