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
from collections.abc import Callable

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_names import mentions, missing_names
from agent.llm.offline_text import article_text, inert, language
from blog.rare_words import unused_words
from blog.spelling import MIN_LENGTH, stem, variants

# Words that point at what is on screen. "it", "this" and "the post" alone are too common to
# count: "is it safe to…", "how does this work with HNSW", "in this case", "the POST endpoint".
_POINTS = re.compile(
    r"\b(here|herein|this (article|post|page|piece|blog ?post|one|section)|the (article|author|"
    r"writer)|(in|on|from) this (article|post|page|piece|one|section|part)|"
    r"(this|that|these|those) \w+ (here|above|mentioned)|mentioned|you (say|said|mention|wrote)|"
    r"(this|it) (talks|says|mentions|describes|explains|covers|shows|discusses|suggests|"
    r"recommends)|(they|the author)( actually| really| just)? (say|said|mean|chose|picked|"
    r"pick|land|landed|use[ds]?|(go|went) with))\b|"
    r"这里|这儿|此处|文中|本文|此文|上文|这篇|该文|文里|文章里|文章中|作者|博主|里面说|"
    r"(上面|前面)(说|提|讲|写)|这一?[节段](话|代码|里|文字)?(?!时间)|这个例子",
    re.IGNORECASE,
)
_TEXT_WORD = re.compile(r"[a-z][a-z0-9_]*")
# The search found nothing either, so the decline speaks of the blog as well as the page.
PAGE_MISSING = {
    "en": "The article on this page doesn’t mention “{name}”, and I found nothing else in "
    "this blog’s articles about it.",
    "zh": "这篇文章没有提到“{name}”，博客的其他文章里也没有找到相关内容。",
}


def points_at_page(question: str) -> bool:
    """True when the question points at the article on screen ("here", "文中", "this post")."""
    return bool(_POINTS.search(question))


def page_answer(*, question: str, page: dict, lang: str, own: str) -> str:
    """The page's facts that answer the question, or a decline naming what the page never
    mentions; "" when it has nothing to quote. `own` is what the system messages say: the
    assistant's name is no topic the page must mention."""
    missing = page_names_missing(question, f"{article_text(page)} {own}")
    if missing:
        return PAGE_MISSING[lang].format(name=inert(missing[0]))
    return compose_answer(
        question=question,
        context="",
        sources=[{**page, "language": language(str(page.get("body") or ""))}],
        excerpts={},
        lang=lang,
        own=own,
    )


def page_first(hits: list[dict], page: dict, limit: int) -> list[dict]:
    """`hits` with the page on screen first (its own hit when the search returned one)."""
    own = next((hit for hit in hits if hit["article_id"] == page["article_id"]), page)
    return [own, *(hit for hit in hits if hit["article_id"] != page["article_id"])][:limit]


def page_names_missing(question: str, page_text: str) -> list[str]:
    """The question's names and rare words that the page never uses, as asked.

    A word counts as used in any of its forms ("retries" for "retry") or mistyped by one edit
    ("reciprocol"); a hyphenated one when each of its parts is ("re-embed").
    """
    text = page_text.lower()
    missing = missing_names(question, [text])
    named = {name.lower() for name in missing}
    unused = unused_words(question, in_text(text))
    return missing + [word for word in unused if word.lower() not in named]


def in_text(text: str) -> Callable[[str], bool]:
    """`used` (blog.rare_words) for the page on screen: the word in any form, or one edit
    from one of its words (lower case)."""
    stems = {stem(word) for word in _TEXT_WORD.findall(text)}

    def used(word: str) -> bool:
        if mentions(text, word) or stem(word) in stems:
            return True
        return len(word) >= MIN_LENGTH and any(stem(v) in stems for v in variants(word))

    return used
