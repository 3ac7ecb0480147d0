"""Topic probes: "Do you have anything on Redis?", "有没有讲 HNSW 的文章？".

A reader asking whether the blog has anything on a term wants, as from a librarian, the
passages that name it, from each article that does, each cited. The term alone is searched
(the asking words, "do you have anything on", only dilute it), the articles found are read,
and only sentences naming the term, or its other-language name from the glossary, are quoted.
A named term no article read mentions is declined as not mentioned: a loosely related
sentence looks like an answer and is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from agent.llm.offline_names import mentions, named_terms
from agent.llm.offline_render import SOURCE
from agent.llm.offline_text import (
    Fact,
    article_text,
    blocks,
    inert,
    language,
    link_label,
    plain,
    sentences,
)
from agent.llm.offline_text import terms as text_terms
from blog.glossary_file import glossary_pairs

MAX_TOPIC_ARTICLES = 3  # articles quoted, as many as an answer reads
TOPIC_READ = 5  # hits read to find those that name the term: the search's usual page
MAX_TOPIC_FACTS = 2  # sentences quoted per article
# An article naming the term less than this share as often as the one naming it most only
# mentions it in passing.
PASSING_SHARE = 0.25
MAX_TERM_WORDS = 5  # "the ASGI application setup" is a term; a longer tail is a question
MAX_TERM_CHARS_ZH = 12
MAX_TERM_CHARS = 80  # a name longer than this is no name a reader types
# A topic probe is short. The limit also bounds the frames' work: each frame's term is followed
# by optional tails, so a run of 4,000 spaces took half a second per frame to refuse.
MAX_PROBE_CHARS = 300

# English framings, each with the term as `x`. Grammar, not a list of questions: a verb of
# covering (have, cover, mention, discuss, say, write, talk about) with the blog, the site,
# the articles or "you" as its subject, the term after "on/about", or before a passive
# ("Where is idempotency discussed?", "Is BM25 covered anywhere?").
_WHO = (
    r"(?:you|the blog|this blog|your blog|the site|this site|the articles?|your articles?|"
    r"the posts?|any (?:of the |of your )?(?:articles?|posts?))"
)
_COVER = (
    r"(?:have|has|got|cover|covers|mention|mentions|discuss|discusses|touch on|go into|"
    r"talk about|say|write|explain)"
)
_SOMETHING = r"(?:anything|something|any(?: \w+)?|an? (?:article|post|piece|write-?up|section))"
_ON = (
    r"(?:on|about|regarding|covering|related to|concerning|that covers?|that discuss(?:es)?|"
    r"that mentions?)"
)
_PASSIVE = (
    r"(?:covered|discussed|mentioned|explained|described|talked about|written about|addressed)"
)
_TAIL = (
    r"(?:\s+(?:at all|anywhere|here|in (?:the|this|your) (?:blog|articles?|posts?)|"
    r"on (?:the|this|your) (?:blog|site)))*"
)
_ENGLISH = [
    rf"^(?:do|does|did) {_WHO} {_COVER}(?: {_SOMETHING})?(?: {_ON})? (?P<x>.+?){_TAIL}$",
    rf"^(?:is|are) there {_SOMETHING}(?: here| in the blog| on the blog)? {_ON} (?P<x>.+?){_TAIL}$",
    rf"^{_SOMETHING} {_ON} (?P<x>.+?){_TAIL}$",
    rf"^any (?:notes?|info|information|material|coverage|mentions?|posts?|articles?|writing) "
    rf"{_ON} (?P<x>.+?){_TAIL}$",
    rf"^what (?:does|do|did) {_WHO} (?:say|have|write|cover|mention) {_ON} (?P<x>.+?){_TAIL}$",
    rf"^what(?:'s| is| has been| was) (?:said|written) {_ON} (?P<x>.+?){_TAIL}$",
    rf"^what (?:have|did) you (?:got |written |write )?{_ON} (?P<x>.+?){_TAIL}$",
    rf"^where (?:is|are) (?P<x>.+?) {_PASSIVE}{_TAIL}$",
    rf"^where (?:does|do) {_WHO} (?:discuss|cover|mention|talk about|explain) (?P<x>.+?){_TAIL}$",
    rf"^(?:is|are) (?P<x>.+?) {_PASSIVE}{_TAIL}$",
    rf"^(?:did|have) you (?:ever )?(?:write|written|cover|covered|post|posted)"
    rf"(?: {_SOMETHING})? {_ON} (?P<x>.+?){_TAIL}$",
]
# Chinese framings: 有没有/有 + a verb of covering (讲, 写, 提到, 介绍, 涉及, 关于) + X + 的(文章)
# + 吗; 博客里讲过 X 吗; 关于 X，博客写了什么; X 在哪篇文章里提到; 哪些文章提到了 X.
_ZH_VERB = r"(?:讲|写|提到|提及|介绍|涉及|谈|聊|说|讨论|关于)"
_ZH_WHERE = r"(?:博客|文章|这里|你们?)(?:里|中|上)?"
_ZH_THING = r"(?:文章|内容|地方|博文|部分)"
_CHINESE = [
    rf"^(?:{_ZH_WHERE})?有没有{_ZH_VERB}(?:过|到)?(?P<x>.+?)的{_ZH_THING}?吗?$",
    rf"^(?:{_ZH_WHERE})?有没有(?P<x>.+?)的{_ZH_THING}吗?$",
    rf"^(?:{_ZH_WHERE})?有(?:没有)?{_ZH_VERB}(?:过|到)?(?P<x>.+?)的{_ZH_THING}?吗$",
    rf"^(?:{_ZH_WHERE})有?{_ZH_VERB}(?:过|到)?(?P<x>.+?)(?:的{_ZH_THING}?)?(?:吗|么|没有)$",
    rf"^关于(?P<x>.+?)[，,]?(?:{_ZH_WHERE})?(?:都)?(?:写|讲|说)了(?:些)?(?:什么|啥)$",
    rf"^关于(?P<x>.+?)[，,]?(?:{_ZH_WHERE})?有(?:什么|哪些|啥)(?:内容|文章|说法)$",
    rf"^(?P<x>.+?)在哪(?:篇|些|里)?(?:文章)?(?:里|中)?(?:有)?{_ZH_VERB}",
    rf"^(?:{_ZH_WHERE})?哪(?:些|篇)(?:文章)?(?:里|中)?{_ZH_VERB}(?:了|过|到)?(?P<x>.+?)$",
]
_FRAMES = [re.compile(p, re.IGNORECASE) for p in _ENGLISH + _CHINESE]
# A term is a thing, not a question of its own: "does the blog say how HNSW works?" asks how.
_ASKS = re.compile(
    r"\b(?:how|why|when|which|what|whether|if|who|should|can|could|would|does|do|is|are|"
    r"it|this|that|them|they|these|those)\b|什么|怎么|怎样|如何|为什么|为何|哪|多少|几|吗|呢|是否|这|那|它",
    re.IGNORECASE,
)
_DETERMINER = re.compile(r"^(?:the|a|an|any|some|your|this|that)\s+", re.IGNORECASE)
# "heartbeats on a dropped connection": the term is the head, before its modifier.
_MODIFIER = re.compile(
    r"\s+(?:on|for|in|with|when|during|under|inside|within)\s+.*$", re.IGNORECASE
)

NOT_NAMED = {
    "en": "The articles I found don’t mention “{name}”, so I can’t point you to anything on it.",
    "zh": "我找到的文章都没有提到“{name}”，所以没有可以推荐的内容。",
}


class _Asking(Protocol):
    """What the planner's turn offers here (agent.llm.offline._Turn)."""

    question: str
    results: list[tuple[str, Any]]

    @property
    def lang(self) -> str: ...

    def call(self, name: str, arguments: dict, n: int = 0) -> Any: ...


@dataclass(frozen=True)
class Topic:
    """The term a topic probe asks about, and the ways an article may name it."""

    term: str  # as asked, without its determiner ("Retry-After", "幂等键")
    head: str  # the term without its modifier ("heartbeats" of "heartbeats on a …")
    names: tuple[str, ...]  # the names inside it ("ASGI" of "the ASGI application setup")
    renderings: tuple[str, ...]  # its other-language names from the glossary


def topic_term(question: str) -> str:
    """The term a topic probe asks about ("Redis" of "Do you have anything on Redis?"), or ""
    when the question is not asking whether the blog has something on a term."""
    text = " ".join(question.split()).rstrip("?？.。!！ ")
    if len(text) > MAX_PROBE_CHARS:
        return ""
    for frame in _FRAMES:
        match = frame.search(text)
        if match and (term := _term(match.group("x"))):
            return term
    return ""


def _term(raw: str) -> str:
    term = _DETERMINER.sub("", raw.strip(" \"'“”‘’`「」《》")).strip()
    if not term or len(term) > MAX_TERM_CHARS or _ASKS.search(term):
        return ""
    if language(term) == "zh":
        return term if len(term) <= MAX_TERM_CHARS_ZH else ""
    return term if len(term.split()) <= MAX_TERM_WORDS else ""


def topic_of(term: str) -> Topic:
    """The term with the ways an article may name it."""
    head = _MODIFIER.sub("", term) if language(term) == "en" else term
    names = tuple(named_terms(head)) if head.lower() != term.lower() or " " in head else ()
    return Topic(term=term, head=head, names=names, renderings=_renderings(head))


def _renderings(head: str) -> tuple[str, ...]:
    """The head's names in the other language, from the glossary lines that name the whole
    head: "idempotency key" gives 幂等键, 限流 gives "rate limit" and "throttle"; "e5 模型" gives
    nothing ("model" alone is not the topic)."""
    found: set[str] = set()
    chinese = language(head) == "zh"
    # "idempotency keys": the glossary writes the singular.
    wanted = [text_terms(head), text_terms(re.sub(r"(?<=\w)s$", "", head))]
    for english, others in glossary_pairs():
        phrase = " ".join(english)
        if chinese and head in others:
            found.add(phrase)
        elif not chinese and wanted[0] and text_terms(phrase) in wanted:
            found.update(others)
    return tuple(sorted(found))


def names_topic(text: str, topic: Topic) -> bool:
    """Whether `text` names the topic: its head, all the names inside it, or a rendering."""
    lowered = text.lower()
    if mentions(lowered, topic.head.lower()):
        return True
    if topic.names and all(mentions(lowered, name.lower()) for name in topic.names):
        return True
    if not topic.names and language(topic.head) == "en" and " " in topic.head:
        # A plain phrase by its words, as the index stems them: "spool files", "files spooled".
        if text_terms(topic.head) <= text_terms(lowered):
            return True
    return any(_renders(lowered, other) for other in topic.renderings)


def _renders(lowered: str, other: str) -> bool:
    """The other-language name as a phrase: "cosine similarity", not "similarity … cosine
    distance"."""
    return other in lowered if language(other) == "zh" else mentions(lowered, other)


def topic_step(
    turn: _Asking, term: str, search: str, detail: str, available: set[str]
) -> tuple[list[Any], str] | None:
    """The planner's next step for a topic probe, or None to let the usual answer go on.

    First the term's own search; then its hits are read (up to TOPIC_READ); then the answer
    quotes those that name the term. None when there is nothing this step can decide: no hit
    (the usual decline), a failed search or read, or no article naming a term that is a plain
    phrase (the usual answer weighs its words).
    """
    searched = [out for name, out in turn.results if name == search]
    read = [out for name, out in turn.results if name == detail]
    if not searched:
        if search not in available:
            return None
        return [turn.call(search, {"query": term, "limit": TOPIC_READ})], ""
    hits = next((out for out in searched if isinstance(out, list) and out), [])
    names = topic_of(term).names
    if not hits and len(searched) == 1 and names and search in available:
        # "the ASGI application setup" found nothing above the bar; the name inside it may.
        return [turn.call(search, {"query": " ".join(names), "limit": TOPIC_READ}, 1)], ""
    if not hits or _titled(term, hits[:TOPIC_READ]):
        return None
    if not read:
        if detail not in available:
            return None
        ids = [hit["article_id"] for hit in hits[:TOPIC_READ]]
        return [turn.call(detail, {"article_id": i}, n) for n, i in enumerate(ids)], ""
    articles = [a for a in read if isinstance(a, dict) and "body" in a]
    if not articles:
        return None
    answer = compose_topic(topic_of(term), articles, turn.lang)
    return ([], answer) if answer else None


def _titled(term: str, hits: list[dict]) -> bool:
    """An article titled after the term ("anything on streaming?": "Streaming tokens to the
    browser") is about it: the usual answer, its summary or best facts, serves better than
    the sentences that name it."""
    wanted = text_terms(_MODIFIER.sub("", term))
    return bool(wanted) and any(wanted <= text_terms(str(hit.get("title", ""))) for hit in hits)


def compose_topic(topic: Topic, articles: list[dict], lang: str) -> str:
    """The sentences naming the topic from the articles that discuss it, most first, each
    article's quotes followed by its source; the plain decline when none names a term that
    holds a name; "" when none names a plain phrase (the usual answer weighs its words)."""
    found = [(article, naming) for article in articles if (naming := _naming(topic, article))]
    if not found:
        # Named only in code ("def check_citations(…)"), which is not quoted: not "not
        # mentioned"; the usual answer says what it can.
        in_code = any(names_topic(article_text(article), topic) for article in articles)
        named = _is_name(topic.term)
        return NOT_NAMED[lang].format(name=inert(topic.term)) if named and not in_code else ""
    # The articles that discuss it, not those naming it in passing (WebSockets: the Channels
    # article 16 times, the streaming one 5, the cancellation one twice). Stable: the search's
    # order among equals.
    found.sort(key=lambda pair: -len(pair[1]))
    most = len(found[0][1])
    kept = [pair for pair in found if len(pair[1]) >= PASSING_SHARE * most][:MAX_TOPIC_ARTICLES]
    return "\n\n".join(
        f"{_render(_quoted(naming))}\n\n{SOURCE[lang]}[{link_label(str(a.get('title', '')))}]"
        f"({a.get('url', '')})"
        for a, naming in kept
    )


def _is_name(term: str) -> bool:
    """A term holding a name ("Kafka", "the ASGI setup"), a single word ("gunicorn") or a
    Chinese term: one no article read names is not in the blog. A plain phrase ("audit
    trail") may be said in other words."""
    return bool(named_terms(f"about {term}")) or len(term.split()) == 1 or language(term) == "zh"


def _naming(topic: Topic, article: dict) -> list[Fact]:
    """All the article's facts that name the topic, in reading order: its summary's
    sentences, then its body's."""
    summary = [
        Fact(text, "sentence", "", -1)
        for text in sentences(plain(str(article.get("summary") or "")))
    ]
    facts = [*summary, *_body_facts(str(article.get("body") or ""))]
    return [fact for fact in facts if names_topic(fact.text, topic)]


def _quoted(naming: list[Fact]) -> list[Fact]:
    """The facts to quote: those that stand alone first, shown in reading order."""
    alone = [fact for fact in naming if not _leans(fact.text)]
    chosen = (alone or naming)[:MAX_TOPIC_FACTS]
    return sorted(chosen, key=naming.index)


@lru_cache(maxsize=32)
def _body_facts(body: str) -> tuple[Fact, ...]:
    """The body's facts, and the sentence that introduces each code block ("…, use the Redis
    layer from the `channels_redis` package:"): quoting leaves it out as a lead-in to a block
    it does not show, but it is often the only sentence naming what the code sets up."""
    facts: list[Fact] = []
    for kind, section, text, _ in blocks(body):
        if kind != "paragraph":
            facts.append(Fact(text, kind, section, len(facts)))
            continue
        for sentence in sentences(text):
            facts.append(Fact(sentence, "sentence", section, len(facts)))
        if text.endswith((":", "：")):
            lead = sentences(text[:-1] + ("。" if text.endswith("：") else "."))[-1:]
            facts += [Fact(line, "sentence", section, len(facts)) for line in lead]
    return tuple(facts)


_LEANING = re.compile(
    r"^(?:this|that|these|those|it|its|they|their|both|such|then|so|but|and|also|otherwise|"
    r"however|instead)\b|^(?:这|那|它|其|但|而|因此|所以|否则|此外|不过)",
    re.IGNORECASE,
)


def _leans(text: str) -> bool:
    """A sentence that leans on the one before it reads badly alone ("It resets…")."""
    return bool(_LEANING.search(text))


def _render(facts: list[Fact]) -> str:
    """Sentences as one paragraph, list items and table rows as bullets."""
    prose = [fact.text for fact in facts if fact.kind == "sentence"]
    joiner = "" if prose and all(language(s) == "zh" for s in prose) else " "
    lines = [joiner.join(prose)] if prose else []
    lines += [f"- {fact.text}" for fact in facts if fact.kind != "sentence"]
    return inert("\n\n".join(lines))
