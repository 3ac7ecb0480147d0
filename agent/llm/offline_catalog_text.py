"""What the offline model says about the catalogue: the lines that introduce a list of
articles, and the declines for what no article has or the record does not hold."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agent.llm.offline_render import LANGUAGE_NAMES
from agent.llm.offline_text import inert

if TYPE_CHECKING:
    from agent.llm.offline_catalog_ask import CatalogueAsk

# A title that says the article introduces its subject: where a beginner starts.
INTRODUCTORY = re.compile(
    r"^what (an? |the )?.+ (is|are)$|\b(primer|introduction|intro to|basics|beginner'?s? "
    r"guide|getting started|101)\b|入门|简介|基础|概述|初探",
    re.IGNORECASE,
)

NOT_RECORDED = {
    "en": {
        "author": "This blog doesn’t record who writes its articles, so I can’t say who wrote "
        "one or list an author’s articles.",
        "readers": "This blog doesn’t record how many people read its articles or what they "
        "say about them, so I can’t say which are read or liked most.",
    },
    "zh": {
        "author": "这个博客没有记录文章的作者，所以我说不出哪篇是谁写的，也列不出某位作者的文章。",
        "readers": "这个博客没有记录文章的阅读量、评论或点赞，所以我说不出哪篇最受欢迎。",
    },
}
NO_TAG = {
    "en": "No article on this blog is tagged “{tag}”. Its tags are: {tags}.",
    "zh": "这个博客没有标签为“{tag}”的文章。现有的标签：{tags}。",
}
NO_LANGUAGE = {
    "en": "No article on this blog is written in {wanted}.",
    "zh": "这个博客没有用{wanted}写的文章。",
}
NO_YEAR = {
    "en": "No article on this blog was published in {year}: its articles date from {first} to "
    "{last}.",
    "zh": "这个博客没有 {year} 年发表的文章：现有文章的发布日期在 {first} 到 {last} 之间。",
}
NO_ARTICLE = {
    "en": "I couldn’t find an article on this blog about “{subject}”.",
    "zh": "我在这个博客里没有找到关于“{subject}”的文章。",
}
ABOUT = {
    "en": "Articles on this blog that name “{topic}”:",
    "zh": "这个博客里提到“{topic}”的文章：",
}
TAGGED = {"en": "“{title}” is tagged {tags}.", "zh": "《{title}》的标签：{tags}。"}
TITLED = {"en": "“{title}” has no tags.", "zh": "《{title}》没有标签。"}

_ORDER = {
    "en": {
        "newest": "newest first",
        "oldest": "oldest first",
        "chronological": "in the order they were published",
    },
    "zh": {"newest": "从新到旧", "oldest": "从早到晚", "chronological": "按发布先后"},
}
_START = {
    "en": {
        "first": "The blog records no reading level; these articles introduce their subject, a "
        "good place to start:",
        "order": "A reading order: first the articles that introduce their subject, then the "
        "rest in the order they were published:",
    },
    "zh": {
        "first": "博客没有给文章标注难度；下面这几篇是入门性质的，适合先读：",
        "order": "推荐的阅读顺序：先读入门性质的文章，再按发布先后读其余的：",
    },
}


def selection(ask: CatalogueAsk, tag: str, lang: str) -> str:
    """The articles asked for, in words: "articles written in Chinese", "标签为“search”的文章"."""
    names = LANGUAGE_NAMES[lang]
    tag = inert(tag or ask.tag)
    if lang == "zh":
        said = "".join(
            [
                f"{ask.year} 年发表的" if ask.year else "",
                f"用{names.get(ask.language, ask.language)}写的" if ask.language else "",
                f"标签为“{tag}”的" if tag else "",
            ]
        )
        return f"{said}文章"
    said = [
        f"written in {names.get(ask.language, ask.language)}" if ask.language else "",
        f"tagged “{tag}”" if tag else "",
        f"published in {ask.year}" if ask.year else "",
    ]
    return " ".join(["articles", " and ".join(s for s in said if s)]).strip()


def intro_line(
    ask: CatalogueAsk, tag: str, matched: int, total: int, lang: str, *, exact: bool
) -> str:
    """The line before the list: what was asked for, how many there are, in what order."""
    if ask.start and not tag:
        return _START[lang][ask.start]
    sel = selection(ask, tag, lang)
    order = _ORDER[lang][ask.order or "newest"]
    filtered = bool(ask.language or tag or ask.year)
    if ask.what == "count":
        return _count(sel, matched, total, lang, exact=exact, filtered=filtered)
    shown = min(ask.shown, matched) if ask.shown else matched
    if shown < matched and ask.order in ("newest", "oldest"):
        return _first_few(ask.order, sel, shown, matched, lang)
    if lang == "zh":
        many = f"{matched} 篇中的 {shown} 篇" if shown < matched else f"{matched} 篇"
        return f"博客里的{sel}（{many}，{order}）："
    many = f"{shown} of {matched}" if shown < matched else f"{matched}"
    return f"The blog’s {sel} ({many}, {order}):"


def _first_few(order: str, sel: str, shown: int, matched: int, lang: str) -> str:
    """ "The newest of the blog’s 14 articles:", "博客 14 篇文章中最早的 3 篇：" """
    if lang == "zh":
        which = "最新" if order == "newest" else "最早"
        return f"博客 {matched} 篇{sel}中{which}的{'一' if shown == 1 else f' {shown} '}篇："
    many = "" if shown == 1 else f" {shown}"
    return f"The{many} {order} of the blog’s {matched} {sel}:"


def _count(sel: str, matched: int, total: int, lang: str, *, exact: bool, filtered: bool) -> str:
    if lang == "zh":
        whole = f"（全部文章共 {total} 篇）" if filtered and exact else ""
        return f"博客{'共有' if exact else '至少有'} {matched} 篇{sel}{whole}："
    whole = f", of {total} in all" if filtered and exact else ""
    return f"The blog has {'' if exact else 'at least '}{matched} published {sel}{whole}:"
