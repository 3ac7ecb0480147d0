"""Questions asked on an article page that lean on it ("where does the 60 come from here?").

A reader on the RRF article asks "这里说的 k 为什么取 60？" or "why stash the task in a set here?"
with the page's topic left unsaid. Searched alone, such a question has too few of the blog's
words to clear the relevance bar, and was declined although the article on screen answers it.
A librarian would look at the page the reader points to: when the search finds nothing and the
question points at the page, the page is read and quoted, if it answers.

Pointing is not answering. Asked on a page, "do they use OpenTelemetry for the spans?" or
"which http client streams from the provider, httpx or aiohttp?" share the page's words
("spans", "stream", "provider") but ask about a thing it never names. A name the page does not
mention, or a word rare in everyday English that it does not use, declines the question.
"""

from __future__ import annotations

import re

from agent.llm.offline_names import mentions, missing_names
from blog.commonness import zipf

# Words that point at what is on screen. "it" and "this" alone are too common to count: "is it
# safe to…", "how does this work with HNSW" point at nothing in particular.
_POINTS = re.compile(
    r"\b(here|herein|this (article|post|page|piece|blog ?post|one)|the (article|post|page|"
    r"author|writer)|(in|on|from) this|(this|that|these|those) \w+ (here|above|mentioned)|"
    r"mentioned|you (say|said|mention|wrote)|(this|it) (talks|says|mentions|describes|explains|"
    r"covers|shows|discusses|suggests|recommends)|(they|the author)( actually| really| just)? "
    r"(say|said|mean|use|chose|picked|went|go|land|pick|use[ds]?|do|did))\b|"
    r"这里|这儿|此处|文中|本文|这篇|文章里|文章中|上面|前面(说|提|讲)|作者|该文|文里|里面说|这一节|这段",
    re.IGNORECASE,
)
# The search found nothing either, so the decline speaks of the blog as well as the page.
PAGE_MISSING = {
    "en": "The article on this page doesn’t mention “{name}”, and I found nothing else in "
    "this blog’s articles about it.",
    "zh": "这篇文章没有提到“{name}”，博客的其他文章里也没有找到相关内容。",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9]")
# A word rarer than this in everyday English names a thing ("httpx", "opentelemetry", "trio");
# "typos" (3.0) and "stash" (3.5) are a reader's own words for what the page says.
RARE_WORD = 3.0
TYPO_PREFIX = 4  # "reciprocol" is the page's "reciprocal": a shared start this long forgives it


def points_at_page(question: str) -> bool:
    """True when the question points at the article on screen ("here", "文中", "this post")."""
    return bool(_POINTS.search(question))


def page_names_missing(question: str, page_text: str) -> list[str]:
    """The question's names and rare words that the page never uses, as asked."""
    text = page_text.lower()
    missing = missing_names(question, [text])
    words = set(re.findall(r"[a-z][a-z0-9_-]*", text))
    for word in _WORD.findall(question):
        lower = word.lower()
        if lower in {m.lower() for m in missing} or zipf(lower) >= RARE_WORD:
            continue
        if not mentions(text, lower) and not _misspelt(lower, words):
            missing.append(word)
    return missing


def _misspelt(word: str, words: set[str]) -> bool:
    if len(word) <= TYPO_PREFIX:
        return False
    return any(w[:TYPO_PREFIX] == word[:TYPO_PREFIX] and _near(w, word) for w in words)


def _near(a: str, b: str) -> bool:
    """Edit distance at most 2 between two words of similar length (cheap: words are short)."""
    if abs(len(a) - len(b)) > 2:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1] <= 2
