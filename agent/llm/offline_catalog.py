"""Questions about the blog's catalogue, answered from the catalogue through the tools.

"Which articles are written in Chinese?", "Which articles are tagged postgres?", "What are
the oldest articles here?", "博客一共有几篇文章？", "Which article should I start with?" and "When
was the step limits article published?" were declined or answered with one unrelated quote.
A librarian reads the catalogue: list_articles (with its tag filter) for sets of articles,
each listed article linked; the search and get_article_detail for one article named by its
title or topic. What the record does not hold (who wrote an article, how often it was read)
is declined as not recorded, and so is a facet no article has (a tag, a language, a year).
How the question is read: offline_catalog_ask.
"""

from __future__ import annotations

from typing import Any

from agent.llm.base import ToolCall
from agent.llm.offline_catalog_ask import CatalogueAsk, catalogue_ask
from agent.llm.offline_catalog_text import (
    ABOUT,
    INTRODUCTORY,
    LANGUAGE_NAMES,
    NO_ARTICLE,
    NO_LANGUAGE,
    NO_TAG,
    NO_YEAR,
    NOT_RECORDED,
    TAGGED,
    TITLED,
    intro_line,
)
from agent.llm.offline_hits import _failed, _hit_list
from agent.llm.offline_names import mentions
from agent.llm.offline_overview import wants_overview
from agent.llm.offline_page import points_at_page
from agent.llm.offline_pagemeta import Call, from_record
from agent.llm.offline_render import SOURCE, article_link
from agent.llm.offline_replies import search_failed
from agent.llm.offline_text import inert, language, plain, terms
from agent.llm.offline_titles import title_names
from agent.llm.offline_tools import DETAIL, LIST, SEARCH
from agent.llm.offline_topic import topic_term
from blog.glossary_file import glossary_pairs

CATALOGUE_LIMIT = 20  # list_articles' own maximum
SUMMARIES_SHOWN = 5  # past this many, each article is listed without its summary


def catalogue_plan(
    *,
    question: str,
    on_page: bool,
    results: list[tuple[str, Any]],
    lang: str,
    available: set[str],
    call: Call,
) -> tuple[list[ToolCall], str] | None:
    """The next tool calls or the answer for a question about the catalogue; None when the
    question is not one, or the tools it needs are missing. `on_page`: asked on an article
    page, where "this article" is the page's (offline_pagemeta), not the catalogue's."""
    ask = catalogue_ask(question)
    if ask is None or (on_page and points_at_page(question)):
        return None
    if ask.tag and not ask.tag_named and topic_term(question):
        return None  # "有没有讲 Redis 的文章？": a topic probe, quoted where named (offline_topic)
    if ask.what == "unrecorded":
        return [], NOT_RECORDED[lang][ask.field]
    if LIST not in available:
        return None
    if ask.what == "count" and not _faceted(ask) and wants_overview(question):
        return None  # "how many articles are there?": the overview says so (offline_overview)
    lists = [out for name, out in results if name == LIST]
    if not lists:
        listing = call(LIST, {"limit": CATALOGUE_LIMIT}, 0)
        if ask.tag and not ask.tag_named and SEARCH in available:
            # A topic may be a tag or not ("articles about HNSW"): its search goes with the
            # catalogue, so a topic no tag names is answered from it without another step.
            return [call(SEARCH, {"query": ask.tag, "limit": 5}, 1), listing], ""
        return [listing], ""
    catalogue = _items(lists[0])
    if ask.what == "record":
        return _record_step(ask, catalogue, results, lang, available, call)
    if ask.tag and not ask.tag_named and not tag_for(ask.tag, _tags(catalogue)):
        return _topic_step(ask.tag, results, lang, available, call)
    return _list_step(ask, catalogue, lists[1:], lang, call)


def _faceted(ask: CatalogueAsk) -> bool:
    return bool(ask.language or ask.tag or ask.year or ask.order or ask.start)


def _items(output: Any) -> list[dict]:
    if not isinstance(output, list):
        return []
    return [i for i in output if isinstance(i, dict) and {"article_id", "title", "url"} <= i.keys()]


def _list_step(
    ask: CatalogueAsk, catalogue: list[dict], tagged: list[Any], lang: str, call: Call
) -> tuple[list[ToolCall], str] | None:
    """Filter by tag through the tool, then by language and year; answer in order."""
    tag = ""
    if ask.tag:
        tag = tag_for(ask.tag, _tags(catalogue))
        if not tagged:
            return [call(LIST, {"tag": tag or ask.tag, "limit": CATALOGUE_LIMIT}, 1)], ""
        if not _items(tagged[0]):
            return [], NO_TAG[lang].format(tag=inert(ask.tag), tags=", ".join(_tags(catalogue)))
    chosen = _items(tagged[0]) if ask.tag else catalogue
    if ask.language:
        if ask.language not in ("en", "zh"):
            return [], NO_LANGUAGE[lang].format(wanted=inert(ask.language.capitalize()))
        chosen = [item for item in chosen if written_in(item) == ask.language]
    if ask.year:
        chosen = [i for i in chosen if str(i.get("published_at", "")).startswith(ask.year)]
    if not chosen:
        return [], _none_left(ask, catalogue, lang)
    return [], _compose(ask, tag, chosen, catalogue, lang)


def _none_left(ask: CatalogueAsk, catalogue: list[dict], lang: str) -> str:
    dates = sorted(str(i.get("published_at", "")) for i in catalogue)
    if ask.year and dates:
        return NO_YEAR[lang].format(year=ask.year, first=dates[0], last=dates[-1])
    wanted = LANGUAGE_NAMES[lang].get(ask.language, ask.language)
    return NO_LANGUAGE[lang].format(wanted=wanted)


def _compose(
    ask: CatalogueAsk, tag: str, chosen: list[dict], catalogue: list[dict], lang: str
) -> str:
    """The intro line, then each chosen article linked, with its date (and its summary when
    few are listed)."""
    ordered = sorted(chosen, key=lambda i: str(i.get("published_at", "")))
    if ask.order == "newest" or not ask.order:
        ordered.reverse()
    if ask.start and not ask.tag:
        ordered = _starters(ordered, whole=ask.start == "order")
    if ask.shown:
        ordered = ordered[: ask.shown]
    full = len(catalogue) < CATALOGUE_LIMIT
    intro = intro_line(ask, tag, len(chosen), len(catalogue), lang, exact=full)
    lines = [_line(item, lang, summary=len(ordered) <= SUMMARIES_SHOWN) for item in ordered]
    return f"{intro}\n\n" + "\n".join(lines)


def _starters(ordered: list[dict], *, whole: bool) -> list[dict]:
    """Articles whose title says they introduce their subject first ("What a tool-driven agent
    is", "文本嵌入入门"), then the rest in the order published; without any, the first three."""
    first = [item for item in ordered if INTRODUCTORY.search(str(item.get("title", "")))]
    if whole:
        return first + [item for item in ordered if item not in first]
    return first or ordered[:3]


def _line(item: dict, lang: str, *, summary: bool) -> str:
    date = inert(str(item.get("published_at", "")))
    text = inert(plain(str(item.get("summary") or ""))) if summary else ""
    dated = f" ({date})" if date else ""
    return f"- {article_link(item)}{dated}" + (f": {text}" if text else "")


def written_in(item: dict) -> str:
    """The article's language as the list tool gives it, else by its title and summary."""
    given = item.get("language")
    if given in ("en", "zh"):
        return str(given)
    return language(f"{item.get('title', '')} {item.get('summary', '')}")


def _tags(catalogue: list[dict]) -> list[str]:
    return sorted({str(tag) for item in catalogue for tag in item.get("tags") or []})


def tag_for(word: str, tags: list[str]) -> str:
    """The tag a reader's word names: as written, by its stem ("agent" of "agents"), as a
    longer name the tag shortens ("PostgreSQL" of "postgres"), or in Chinese through the
    glossary ("搜索" of "search")."""
    lowered = word.lower().strip()
    english = [lowered]
    if not lowered.isascii():
        # As the glossary writes it, else a glossary term inside the reader's compound
        # ("流式传输", streaming transfer, holds "流式").
        english = [" ".join(en) for en, zh in glossary_pairs() if lowered in zh] or [
            " ".join(en) for en, zh in glossary_pairs() if any(t in lowered for t in zh)
        ]
    for candidate in english:
        for tag in tags:
            name = tag.lower()
            if name == candidate or (terms(name) and terms(name) == terms(candidate)):
                return tag
            if len(name) >= 5 and candidate.startswith(name) and candidate.isalpha():
                return tag
    return ""


def _topic_step(
    topic: str, results: list[tuple[str, Any]], lang: str, available: set[str], call: Call
) -> tuple[list[ToolCall], str] | None:
    """A topic no tag names ("articles about daphne"): the articles the search finds that name
    it, each linked; none, and the blog has no article about it."""
    searched = [out for name, out in results if name == SEARCH]
    if not searched:
        if SEARCH not in available:
            return None
        return [call(SEARCH, {"query": topic, "limit": 5}, 1)], ""
    if _failed(searched[0]):  # it found nothing yet: "no article about it" would be untrue
        return [], search_failed(searched[0], lang)
    naming = _naming_hits(topic, searched[0])
    if not naming:
        return [], NO_ARTICLE[lang].format(subject=inert(topic))
    lines = [_line(hit, lang, summary=True) for hit in naming]
    return [], ABOUT[lang].format(topic=inert(topic)) + "\n\n" + "\n".join(lines)


def _record_step(
    ask: CatalogueAsk,
    catalogue: list[dict],
    results: list[tuple[str, Any]],
    lang: str,
    available: set[str],
    call: Call,
) -> tuple[list[ToolCall], str] | None:
    """Find the article by its title in the catalogue, else by the search; read it; answer
    the field asked for from its record."""
    details = [out for name, out in results if name == DETAIL]
    if details:
        article = details[0]
        if not isinstance(article, dict) or "title" not in article:
            return None
        return [], _field(ask.field, article, lang)
    found = titled(ask.subject, catalogue)
    if found is None:
        searched = [out for name, out in results if name == SEARCH]
        if not searched:
            if SEARCH not in available:
                return None
            return [call(SEARCH, {"query": ask.subject, "limit": 5}, 1)], ""
        if _failed(searched[0]):
            return [], search_failed(searched[0], lang)
        found = next(iter(_naming_hits(ask.subject, searched[0])), None)
        if found is None:
            return [], NO_ARTICLE[lang].format(subject=inert(ask.subject))
    if ask.field in ("date", "tags") or DETAIL not in available:
        return [], _field(ask.field, found, lang)
    return [call(DETAIL, {"article_id": found["article_id"]}, 2)], ""


def titled(subject: str, catalogue: list[dict]) -> dict | None:
    """The article whose title is the subject, or names all its words (in either language)."""
    wanted = terms(subject)
    best, most = None, 0
    for item in catalogue:
        title = str(item.get("title", ""))
        if plain(title).lower() == subject.lower():
            return item
        shared = len(wanted & terms(title))
        if wanted and (shared == len(wanted) or title_names(subject, title)) and shared >= most:
            best, most = (item, shared) if best is None or shared > most else (best, most)
    return best


def _naming_hits(subject: str, output: Any) -> list[dict]:
    """The search hits whose title or excerpt names the subject, best first: a hit that only
    clears the bar is no article "about" it ("the article on GraphQL")."""
    hits = [
        h for h in _hit_list(output) if isinstance(h, dict) and {"article_id", "url"} <= h.keys()
    ]
    return [
        hit for hit in hits if _names(f"{hit.get('title', '')} {hit.get('excerpt', '')}", subject)
    ]


def _names(text: str, subject: str) -> bool:
    """The text names the subject as written, or a Chinese subject by one of its glossary
    names ("限流" of "Rate limits and token budgets")."""
    lowered = text.lower()
    if language(subject) == "zh":
        if subject in text:
            return True
        english = [" ".join(en) for en, zh in glossary_pairs() if subject in zh]
        return any(mentions(lowered, name) for name in english)
    return mentions(lowered, subject.lower()) or title_names(subject, text)


def _field(field: str, article: dict, lang: str) -> str:
    """The field asked for, cited: its tags here, the rest as the page's record gives them."""
    if field != "tags":
        return from_record(field, article, lang, brief=True)
    tags = ", ".join(inert(str(t)) for t in article.get("tags") or [])
    title = inert(str(article.get("title", "")))
    line = (TAGGED if tags else TITLED)[lang].format(title=title, tags=tags)
    return f"{line}\n\n{SOURCE[lang]}{article_link(article)}"
