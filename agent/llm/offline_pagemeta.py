"""Questions about the article on screen itself: its date, its sections, its gist, what to
read next, whether it exists in the other language, and what the blog does not record.

"When was this article published?" or "这篇有哪几个部分？" asks about the page, not its topic:
searched, such a question carries no word of the blog's and was declined, or matched an
unrelated sentence ("做法：附加信息…"). A librarian answers it from the page's own record
(get_article_detail: date, summary, body; list_articles: the articles sharing its tags), and
says so plainly when the record has no such field (the author, the number of readers).

A question is about the page when it asks one of these things and names nothing else: "which
section of this article tunes ef_search?" names a topic and is searched as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agent.llm.base import ToolCall
from agent.llm.offline_audience import audience_answer
from agent.llm.offline_render import LANGUAGE_NAMES, SOURCE, article_link, compose_summary
from agent.llm.offline_text import CJK_RUN, blocks, inert, language, plain, terms
from agent.llm.offline_tools import DETAIL, LIST

RELATED_SHOWN = 3  # articles suggested to read next
TAG_LIST_LIMIT = 20  # list_articles' own maximum: each tag's articles, newest first
# A question says too much of its own to be about the page alone past this many words
# (Chinese counts character pairs: about twice as many per idea).
OWN_WORDS = {"en": 1, "zh": 2}
# Such a question is short; a longer one names more than the page. The limit also bounds the
# patterns' work: "who" repeated through a 4,000-character question took 0.4 s to refuse.
MAX_ASK_CHARS = 300

Call = Callable[[str, dict, int], ToolCall]

# What the record has no field for, checked first: "when was it last edited?" is not a date
# the record gives, and "who wrote this?" is no request for the body's words on a writer.
_UNRECORDED = {
    "author": r"\bwho\b[^?？]*\b(wrote|writes|write|written|authored|posted)\b|"
    r"\bwho('s| is)( the)? (author|writer)|\b(author|writer)('s)? (name|bio|background|contact)|"
    r"\b(author|writer) of (this|the)\b|\bwho('s| is) behind\b|"
    r"作者是谁|谁写|作者叫|作者的名字|哪位作者|作者是哪|写的人是谁|博主是谁",
    "readers": r"\bhow many (people|readers|visitors|views|times|comments|likes|upvotes|shares)\b|"
    r"\b(page ?views|view count|readership|read count|popular(ity)?)\b|\b(number|count) of "
    r"(views|readers|comments|likes)\b|阅读量|浏览量|点击量|访问量|多少人(看|读|阅读|浏览)|"
    r"(多少|几)(条|个)?(评论|点赞|赞|收藏)|评论数|点赞数|收藏数",
    # Past and passive forms only: "can I edit the prompt here?" asks how, not when.
    "edited": r"\b(was|were|been|is|has|ever|get|got)( \w+){0,2} (edited|updated|revised|"
    r"modified|changed)\b|\blast (edit|updat|chang|modif|revis)\w*|\b(revisions|changelog|"
    r"update history)\b|(最后|上次|最近)(一次)?(修改|更新|修订|编辑)|(修改|更新|修订|改动)(过|时间|"
    r"日期|记录)|改过",
}
_ASKS = {
    "date": r"\b(publication|publish(ed|ing)?|post(ed|ing)?|release) date\b|\bhow (old|recent|"
    r"long ago)\b|\bis (this|it)( (article|post|page|piece|one))? (recent|new|old|current|"
    r"up to date)\b|"
    r"\b(when|what (day|date|year|month))\b[^?？]*\b(publish\w*|posted|written|wr[io]te|"
    r"(come|came|go|went|put) (out|up|online)|released?)\b|"
    r"(什么时候|何时|哪天|哪一天|哪年|几月|几号|日期|时间)[^？?]{0,6}(发布|发表|发的|写的|写成|上线|"
    r"出的|贴出)|(发布|发表)(日期|时间|于)|多久以前",
    "sections": r"\b(sections?|headings?|headers?|subheadings?|outline|structured?|table of "
    r"contents|chapters?|parts)\b|部分|小节|章节|几节|目录|结构|大纲|标题|分几",
    "gist": r"\b(take-?aways?|take away|main (points?|ideas?|message|argument)|key (points?|"
    r"ideas?|message|lessons?)|gist|tl;?dr|summar\w*|sum (it |this )?up|in (one|a|1) "
    r"(sentence|line|word)|in (short|brief|a nutshell)|eli5|like i'?m (five|5)|bottom line|"
    r"what('s| is| was) (this|it)( (article|post|page|piece|one))? about)\b|"
    r"要点|重点|核心|总结|概括|归纳|一句话|简单说|"
    r"[讲说]了?(什么|啥)|主要(内容|讲|说|观点)|大意|中心思想|观点",
    # Who the page is written for, or what a reader needs first: the record has no such field,
    # so the page's own words say it (a sentence naming its readers) or what it covers does.
    "audience": r"\bwho (is|'s|was) (this|it)( \w+)? (for|aimed at|(written|meant|intended) "
    r"for)\b|\bwho (should|would|needs to|ought to|is meant to|is supposed to) read\b|"
    r"\b(target|intended) (audience|readers?)\b|\b(for|suit(ed|able)? for|aimed at) (a )?"
    r"(beginners?|newbies?|novices?|newcomers?|experts?|juniors?|seniors?|experienced)\b|"
    r"\b(beginner|newbie|novice)[- ]friendly\b|\bprerequisites?\b|\bwhat (do|should|must) "
    r"i (need to |have to )?know (before|first)\b|适合(谁|哪些人|什么人|什么样的人|新手|初学者|"
    r"入门)|面向(谁|哪些|什么)|写给谁|(目标|预期)读者|读者(对象|是谁)|(需要|要)(什么|哪些|先有)?"
    r"(基础|前置知识|预备知识)|前置知识|预备知识|需要先(了解|懂|学|知道|看)",
    "related": r"\b(related|similar|like this|read (next|after)|next read|what (else|next)|"
    r"recommend\w*|further reading|more like)\b|相关|类似|相似|接下来|下一篇|推荐|延伸阅读|"
    r"接着(读|看)",
    "version": r"\btranslat\w*|\b(version|edition)s?\b|\bin (chinese|english|mandarin|another "
    r"language|other languages)\b|[中英]文版|英语版|翻译|译文|译本|(其他|别的|其它)语言|"
    r"(英文|中文|英语|汉语)的?版本",
}
_TAGS = re.compile(r"\b(tags?|tagged|labels?)\b|标签", re.IGNORECASE)
_ASKED = {ask: re.compile(pattern, re.IGNORECASE) for ask, pattern in _ASKS.items()}
_NOT_RECORDED = {what: re.compile(pattern, re.IGNORECASE) for what, pattern in _UNRECORDED.items()}
# Words that point at the page on screen; "it" and "this" alone do only first thing in a
# conversation (after an answer they may mean what it quoted).
_POINTER = re.compile(
    r"\b(this|that|the) (article|post|page|piece|blog ?post|write-?up|entry|essay|one)\b|"
    r"\bhere\b|这篇|本文|此文|该文|本篇|这页|此页|本页|这一篇",
    re.IGNORECASE,
)
_BARE_POINTER = re.compile(r"\b(this|it)\b|这个|它", re.IGNORECASE)
# How readers frame any such question; what is left after these names a topic.
_FRAME = re.compile(
    r"\b(please|pls|can|could|you|me|give|tell|show|list|is|are|there|any|other|else|blog|"
    r"articles?|posts?|pages?|available|have|do|does|did|what|which|should|i|my|one|on|of|in|"
    r"to|for|this|that|it|the|a|an|versions?|after|next|read|been|was|up|go|so|far|new|"
    r"recent|old|like|five|5|explain|short|sentence|main|key|topics?|cover(s|ed)?|about|by)\b|"
    r"文章|博文|这个|它|是|的|了|吗|呢|啊|吧|呀|一下|请|帮我|给我|能|可以|有|没有|什么|哪些|哪几个|"
    r"哪|怎样|怎么样|多少|几个|几|还|个|些|篇|读|看|该|说说|讲讲|列出|列一下|简单|其他|人|"
    r"版本|版|英文|中文|英语|汉语|语言|谁",
    re.IGNORECASE,
)

NOT_RECORDED = {
    "en": {
        "author": "This blog doesn’t record who writes its articles, so I can’t say who wrote "
        "this one.",
        "readers": "This blog doesn’t record how many people read its articles or what they "
        "say about them, so I can’t say that for this one.",
        "edited": "This blog records when an article was published, not when it was last "
        "edited, so I can’t say whether this one changed since.",
    },
    "zh": {
        "author": "这个博客没有记录文章的作者，所以我说不出这篇是谁写的。",
        "readers": "这个博客没有记录文章的阅读量、评论或点赞，所以这篇的这些数字我给不出。",
        "edited": "这个博客只记录文章的发布日期，不记录修改时间，所以我说不出这篇后来是否改过。",
    },
}
PUBLISHED = {"en": "“{title}” was published on {date}.", "zh": "《{title}》发布于 {date}。"}
SECTIONS = {"en": "“{title}” has {count} sections:", "zh": "《{title}》共有 {count} 节："}
RELATED = {
    "en": "Articles on this blog that share topics with “{title}” ({tags}):",
    "zh": "这个博客里与《{title}》主题相同的文章（{tags}）：",
}
NO_RELATED = {
    "en": "No other article on this blog shares a topic tag with “{title}”.",
    "zh": "这个博客里没有其他文章与《{title}》有相同的主题标签。",
}
NO_VERSION = {
    "en": "This blog has no {wanted} version of “{title}”.",
    "zh": "这个博客没有《{title}》的{wanted}版本。",
}
TRANSLATED = {
    "en": "Yes: “{title}” has a {wanted} version:",
    "zh": "有的，《{title}》有{wanted}版本：",
}
WRITTEN_IN = {
    "en": "“{title}” is itself written in {wanted}.",
    "zh": "《{title}》本身就是用{wanted}写的。",
}
OTHERS_IN = {
    "en": "Its articles in {wanted}: {titles}.",
    "zh": "博客里的{wanted}文章有：{titles}。",
}
# Asked for briefly, the gist is the page's own summary, without each section's lead.
_BRIEF = re.compile(
    r"\b(in (one|a|1) (sentence|line|word)|in (short|brief|a nutshell)|tl;?dr|eli5|"
    r"like i'?m (five|5))\b|一句话|简单说|简要|简短",
    re.IGNORECASE,
)
BRIEF_IN = {
    "en": "“{title}” is written in {written}; its summary, as it puts it:",
    "zh": "《{title}》是{written}文章，以下是它的摘要（原文）：",
}
UNREAD = {
    "en": "I couldn’t read the article on this page just now, so I can’t say.",
    "zh": "这次没能读取本页的文章，所以我说不准。",
}
_WANTED = [
    (re.compile(r"\b(chinese|mandarin)\b|中文|汉语|简体|繁体", re.IGNORECASE), "zh"),
    (re.compile(r"\benglish\b|英文|英语", re.IGNORECASE), "en"),
]


def page_ask(question: str, *, first: bool) -> str:
    """What the question asks about the page itself ("date", "sections", "gist", "related",
    "version", or "unrecorded:<what>"), or "" when it is not about the page alone. `first`:
    nothing was asked before in the conversation ("it" then can only mean the page)."""
    if len(question) > MAX_ASK_CHARS:
        return ""
    pointer = bool(_POINTER.search(question) or (first and _BARE_POINTER.search(question)))
    if not (pointer or first):
        return ""  # after an answer, "a summary?" may mean the article it quoted
    # "Who is this written for?" names its readers, not its writer: checked before the author.
    audience = _ASKED["audience"]
    if audience.search(question) and _names_nothing(question, audience, pointer):
        return "audience"
    for what, pattern in _NOT_RECORDED.items():
        if pattern.search(question) and _names_nothing(question, pattern, pointer):
            return f"unrecorded:{what}"
    for ask, pattern in _ASKED.items():
        if pattern.search(question) and _names_nothing(question, pattern, pointer):
            return ask
    return ""


def _names_nothing(question: str, asked: re.Pattern[str], pointer: bool) -> bool:
    """Nothing but the asking is left ("when was this published?"); one word more when the
    question points at the page ("is this post recent?")."""
    rest = _FRAME.sub(" ", _POINTER.sub(" ", asked.sub(" ", question)))
    if not pointer:
        return not terms(rest)
    # A word in letters in a Chinese question is a name ("这篇哪部分讲 HNSW？"): a topic.
    pairs = {term for term in terms(rest) if CJK_RUN.search(term)}
    words = terms(rest) - pairs
    if language(question) == "zh":
        return not words and len(pairs) <= OWN_WORDS["zh"]
    return not pairs and len(words) <= OWN_WORDS["en"]


def page_meta_plan(
    *,
    question: str,
    page: int,
    first: bool,
    results: list[tuple[str, Any]],
    lang: str,
    available: set[str],
    call: Call,
) -> tuple[list[ToolCall], str] | None:
    """The next tool calls or the answer for a question about the page on screen; None when
    the question is not one (or the tools it needs are missing)."""
    ask = page_ask(question, first=first)
    if not ask:
        return None
    if ask.startswith("unrecorded:"):
        return [], NOT_RECORDED[lang][ask.split(":", 1)[1]]
    if DETAIL not in available or (ask in ("related", "version") and LIST not in available):
        return None
    details = [out for name, out in results if name == DETAIL]
    if not details:
        return [call(DETAIL, {"article_id": page}, 0)], ""
    article = details[0]
    if not isinstance(article, dict) or "body" not in article:
        return [], UNREAD[lang]
    if ask == "version" and (translated := translated_version(question, article, lang)):
        return [], translated
    if ask in ("related", "version"):
        return _listed(ask, article, results, lang, call, question)
    return [], from_record(ask, article, lang, brief=bool(_BRIEF.search(question)))


def ask_of_record(question: str) -> str:
    """Which field of an article's record the question asks for ("tags", "date", "sections",
    "gist"), wherever the article is; "" for none."""
    if _TAGS.search(question):
        return "tags"
    return next((a for a in ("date", "sections", "gist") if _ASKED[a].search(question)), "")


def from_record(ask: str, article: dict, lang: str, *, brief: bool = False) -> str:
    """The date, the sections, the gist or the audience, from the page's own record, cited;
    asked for briefly ("in one sentence"), the gist is the summary alone."""
    if ask == "audience":
        return audience_answer(article, lang)
    title = inert(str(article.get("title", "")))
    source = f"{SOURCE[lang]}{article_link(article)}"
    if ask == "date" and article.get("published_at"):
        date = inert(str(article["published_at"]))
        return f"{PUBLISHED[lang].format(title=title, date=date)}\n\n{source}"
    headings = page_sections(str(article.get("body") or ""))
    if ask == "sections" and headings:
        listed = "\n".join(f"{n}. {inert(head)}" for n, head in enumerate(headings, 1))
        intro = SECTIONS[lang].format(title=title, count=len(headings))
        return f"{intro}\n\n{listed}\n\n{source}"
    summary = inert(plain(str(article.get("summary") or "")))
    if ask != "gist" or not brief or not summary:
        return compose_summary(article, lang)
    written = _written(article)
    if written != lang:
        intro = BRIEF_IN[lang].format(title=title, written=LANGUAGE_NAMES[lang][written])
        summary = f"{intro}\n\n{summary}"
    return f"{summary}\n\n{source}"


def page_sections(body: str) -> list[str]:
    """The article's section headings in order (those with text under them)."""
    return list(dict.fromkeys(section for _, section, _, _ in blocks(body) if section))


def _listed(
    ask: str, article: dict, results: list[tuple[str, Any]], lang: str, call: Call, question: str
) -> tuple[list[ToolCall], str]:
    """Related articles (those sharing the page's tags) or the other language's articles."""
    lists = [out for name, out in results if name == LIST]
    tags = [str(tag) for tag in article.get("tags") or []]
    if not lists:
        if ask == "version" or not tags:
            return [call(LIST, {"limit": TAG_LIST_LIMIT}, 0)], ""
        return [
            call(LIST, {"tag": tag, "limit": TAG_LIST_LIMIT}, n) for n, tag in enumerate(tags)
        ], ""
    listed = [item for out in lists if isinstance(out, list) for item in out if _is_item(item)]
    if ask == "version":
        return [], other_version(question, article, listed, lang)
    return [], related_answer(article, listed, lang)


def _is_item(item: Any) -> bool:
    return isinstance(item, dict) and {"article_id", "title", "url"} <= item.keys()


def related_answer(article: dict, listed: list[dict], lang: str) -> str:
    """The articles sharing most of the page's tags (a tag few articles carry counts more),
    each linked with its summary; or that none shares one."""
    title = inert(str(article.get("title", "")))
    tags = {str(tag) for tag in article.get("tags") or []}
    others = {
        item["article_id"]: item
        for item in listed
        if item["article_id"] != article.get("article_id")
    }
    carriers = {tag: sum(tag in item.get("tags", []) for item in others.values()) for tag in tags}

    written = _written(article)

    def weight(item: dict) -> tuple[float, bool]:
        # Among equals, one the reader can read as they read this page.
        shared = sum(1 / carriers[tag] for tag in tags & set(item.get("tags") or []))
        return shared, _written(item) == written

    shared = [item for item in others.values() if weight(item)[0] > 0]
    ranked = sorted(shared, key=weight, reverse=True)[:RELATED_SHOWN]
    if not ranked:
        return NO_RELATED[lang].format(title=title)
    lines = [RELATED[lang].format(title=title, tags=", ".join(sorted(tags)))]
    for item in ranked:
        summary = inert(str(item.get("summary") or ""))
        lines.append(f"- {article_link(item)}" + (f": {summary}" if summary else ""))
    return "\n".join(lines)


def translated_version(question: str, article: dict, lang: str) -> str:
    """The page's translation in the language asked for (another language when none is
    named), linked and cited, from the record's `translations`; "" when it has none."""
    written = _written(article)
    wanted = next((code for pattern, code in _WANTED if pattern.search(question)), "")
    wanted = wanted or ("en" if written == "zh" else "zh")
    translations = [t for t in article.get("translations") or [] if _is_item(t)]
    found = next((t for t in translations if _written(t) == wanted), None)
    if wanted == written or found is None:
        return ""
    title = inert(str(article.get("title", "")))
    said = TRANSLATED[lang].format(title=title, wanted=LANGUAGE_NAMES[lang][wanted])
    return f"{said} {article_link(found)}\n\n{SOURCE[lang]}{article_link(found)}"


def other_version(question: str, article: dict, listed: list[dict], lang: str) -> str:
    """That the blog keeps no translation of the page, and what it has in the language asked
    for (named, not linked: none of them is this article). Cites nothing."""
    title = inert(str(article.get("title", "")))
    written = _written(article)
    wanted = next((code for pattern, code in _WANTED if pattern.search(question)), "")
    wanted = wanted or ("en" if written == "zh" else "zh")
    name = LANGUAGE_NAMES[lang][wanted]
    if wanted == written:
        return WRITTEN_IN[lang].format(title=title, wanted=name)
    lines = [NO_VERSION[lang].format(title=title, wanted=name)]
    titles = [inert(str(item["title"])) for item in listed if _written(item) == wanted]
    if titles:
        quoted = [f"“{t}”" if lang == "en" else f"《{t}》" for t in titles[: RELATED_SHOWN * 2]]
        joiner = "、" if lang == "zh" else ", "
        lines.append(OTHERS_IN[lang].format(wanted=name, titles=joiner.join(quoted)))
    return " ".join(lines)


def _written(article: dict) -> str:
    """The language an article is written in, by its title and summary."""
    return language(f"{article.get('title', '')} {article.get('summary', '')}")
