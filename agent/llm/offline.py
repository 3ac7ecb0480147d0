"""A deterministic extractive ChatModel used when no model endpoint is configured.

It works like an honest librarian: search (with the conversation's earlier question in mind
for a follow-up), read the articles whose hits cleared the search's relevance bar, and answer
with their own most relevant sentences, list items and table rows, citing every article it
quotes. When nothing clears the bar it says so, in the question's language.
No network, no randomness.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

from agent.answered import is_decline
from agent.llm.base import ModelTurn, TextDelta, ToolCall, Usage
from agent.llm.offline_answer import SOURCE, compose_answer, compose_summary
from agent.llm.offline_definitions import defined_subject
from agent.llm.offline_foreign import FOREIGN_DECLINE, foreign_decline
from agent.llm.offline_names import mentions
from agent.llm.offline_overview import (
    NOTHING_BEFORE,
    OVERVIEW_LIMIT,
    WELCOME,
    asks_how_many,
    compose_overview,
    compose_rephrase,
    wants_overview,
    wants_rephrase,
    without_preamble,
)
from agent.llm.offline_page import page_answer, page_first, points_at_page
from agent.llm.offline_parts import question_parts
from agent.llm.offline_script import reader_script
from agent.llm.offline_self import about_assistant
from agent.llm.offline_swap import asked_language, swapped_subject
from agent.llm.offline_text import answer_language, language, terms
from agent.prompts import PAGE_CONTEXT_PREFIX, READER_LANGUAGE_PREFIX, STEP_LIMIT_NUDGE
from agent.small_talk import is_thanks
from blog.script import question_fold, simplified_chars

SEARCH = "search_knowledge_base"
DETAIL = "get_article_detail"
LIST = "list_articles"
# The typographic apostrophe, as in the panel's own strings. agent.answered reads "’" as "'",
# so a turn stored with "couldn't" still counts as a decline.
DONT_KNOW = {
    "en": "I couldn’t find anything about that in this blog’s articles.",
    "zh": "我在这个博客的文章里没有找到相关内容。",
}
# A search that failed (timed out, raised) found nothing *yet*: saying "the blog has nothing on
# that" would be untrue, and on a first run, while the demo articles index, it is common.
SEARCH_FAILED = {
    "en": "The search didn’t finish this time, so I can’t say whether the blog covers that. "
    "Please ask again in a moment.",
    "zh": "这次检索没有完成，所以我还说不准博客里是否有相关内容。请稍后再问一次。",
}
# "and in Chinese?" answered from an article in the other language: quotes are not translated.
AS_WRITTEN = {
    "en": "I can only quote this blog’s articles as they are written, not translate them; "
    "this one is written in Chinese:",
    "zh": "我只能引用这个博客的文章原文，没法翻译；这篇文章是用英文写的：",
}
_FOUND_NOTHING = {*DONT_KNOW.values(), *SEARCH_FAILED.values(), *FOREIGN_DECLINE.values()}
MAX_READ = 3  # articles read in full per question
LIST_LIMIT = 4 * OVERVIEW_LIMIT  # listed for an overview: the reader's language goes first
# A lower hit is read too when its relevance is at least this share of the top hit's.
SECOND_HIT_SHARE = 0.75

_PAGE = re.compile(re.escape(PAGE_CONTEXT_PREFIX) + r'(\d+) "(.*)" \((\S+)\)')
_READER = re.compile(re.escape(READER_LANGUAGE_PREFIX) + r"\w+ \(([\w-]+)\)")
_SUMMARY = re.compile(
    # Whole words: "gist" is inside "AppRegistryNotReady", which is no request for a summary.
    r"\b(summari[sz]\w*|summary|tl;?dr|sum (it )?up|overview|key points|main points|gist)\b|"
    r"总结|概括|摘要|概述|要点|讲了什么|说了什么|主要内容|"
    # "What does the blog say about X?", "is there an article on X?", "有没有讲X的文章": the
    # answer is that article, summed up, or that there is none.
    r"^\W*(what|anything) (do|does|did) (the|this|your) (blog|site|articles?|posts?) "
    r"(say|said|write|cover|have)\b|"
    r"^\W*does (the|this|your) (blog|site) (say|write|have|cover|mention) (anything|something)?|"
    r"^\W*(is there|are there|do you have|have you got|any) (an? |any )?(articles?|posts?|"
    r"write-?ups?) (on|about|covering|regarding|that covers?|explaining)\b|"
    r"^\W*(did|have) you (write|written) (anything |something )?(on|about)\b|"
    r"有没有(?=[^？?]{1,20}(文章|博文))|的?(文章|博文)吗|博客(里|中)?(是)?怎么(说|讲)",
    re.IGNORECASE,
)
_THIS_PAGE = re.compile(
    r"\bthis (article|post|page)\b|\bthis\b|\bit\b|这篇|本文|这个|这页|该文", re.IGNORECASE
)
# Words that lean on the previous question ("which of those is cheapest?", "那个呢？").
_FOLLOW_UP = re.compile(
    r"\b(those|these|them|they|it|its|this|there|the two|the first|the second|the latter|"
    r"the former|either|both|the other|same)\b|^\s*(and|but|so|then|also|what about|"
    r"how about)\b|那些|这些|它们|它|哪个|哪一个|其中|上面|前者|后者|那个|这个|两者|两种|"
    # A demonstrative with a measure word points back as "这个" does: "这条记录" (this record),
    # "这一轮" (this turn), "分这么细" (split this finely), "那两路结果" (those two lists).
    r"[这那](?:[种样么条篇次轮俩两位项步段]|一[种条篇次轮个项步])|"
    # "that" with a particle is the object of a phrasal verb: "turn that off", "set that up".
    r"\bthat (?:off|on|up|down|out|back|away|instead)\b|"
    # "one" standing for a thing named before: "Which one did Docent pick?" as 哪个 does
    # ("the one that trades recall for speed" names it in its own clause).
    r"\b(?:which|that) ones?\b|"
    # A leading 那 ("then") leans back before a pause, a function word or a clause ending in 呢
    # ("那单次模型调用呢？", "那在生产环境里…"); not as the first sound of 那不勒斯 (Naples).
    r"^\s*(那(?=[，,、\s就在要还是该怎为如]|[^？?。！!]*呢)|那么|如果|还|再|另外|而)|呢[？?]?\s*$|"
    # "that" after a verb or a preposition points back ("how long does that take?", "is there a
    # limit on that?"); after a noun it starts a clause ("a tool that does not exist").
    r"\b(?:does|do|did|is|was|are|were|will|would|can|could|should|about|for|with|of|on|in|"
    r"from|to|after|before|without|like|by) that\b",
    re.IGNORECASE,
)
FOLLOW_UP_TERMS = 2  # a question with this few words of its own leans on the one before
# The line an answer ends each article's quotes with ("Source: [Title](/articles/…/)").
_SOURCE_LINE = re.compile("^(" + "|".join(map(re.escape, SOURCE.values())) + r")\[", re.MULTILINE)
# The link of each source line: the articles an answer quoted.
_CITED = re.compile(
    "^(?:" + "|".join(map(re.escape, SOURCE.values())) + r")\[[^\]\n]*\]\(([^)\s]+)\)",
    re.MULTILINE,
)


class OfflineModel:
    """Extractive planner and answerer implementing ChatModel without a language model."""

    name = "offline-extractive"
    offline = True

    async def stream(
        self, messages: list[dict], tools: list[dict] | None
    ) -> AsyncIterator[TextDelta | ModelTurn]:
        # Composing an answer is pure Python (tens of ms; over 100 ms for a 2,000-character
        # question of repeated words against a long article): off the event loop, so the
        # worker's other sockets keep being served meanwhile.
        names = {t["function"]["name"] for t in tools or []}
        calls, answer = await asyncio.to_thread(plan, messages, names)
        # An answer quoting articles ends each one's quotes with its source; a decline cites
        # nothing. A quote may open with words that read as a decline ("…关键词检索就找不到。"):
        # the model says it answered. Anything else (greetings, the overview) is read as text.
        declined = False if not calls and _SOURCE_LINE.search(answer) else None
        answer = reader_script(answer, messages)  # the question was matched in Simplified
        for piece in _pieces(answer):
            yield TextDelta(piece)
        yield ModelTurn(text=answer, tool_calls=calls, usage=Usage(), declined=declined)


@dataclass
class _Turn:
    """What the planner reads from the messages of the current turn."""

    question: str
    earlier: list[str]
    page: int | None
    results: list[tuple[str, Any]] = field(default_factory=list)
    page_hit: dict | None = None  # the page on screen as a search hit: id, title, url
    step: int = 1
    index: int = 0
    system: str = ""  # the system messages: the assistant's own name and the page on screen
    previous_answer: str = ""  # the assistant's last answer before this question
    leans_on: str = ""  # the earlier question a follow-up leans on: the last one answered
    reader: str = ""  # the language the visitor reads the site in ("zh-hans"), if known
    asked_in: str = ""  # the language a follow-up asked the last answer in ("and in Chinese?")

    @property
    def lang(self) -> str:
        """The answer's language (its frame, its declines); matching words goes by the
        question's own (`language(question)`)."""
        return self.asked_in or answer_language(self.question, self.reader)

    def call(self, name: str, arguments: dict, n: int = 0) -> ToolCall:
        call_id = f"call_offline_{self.index}_{self.step}_{n}"
        return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))


def plan(messages: list[dict], available: set[str]) -> tuple[list[ToolCall], str]:
    """Return the next tool calls, or the final answer text."""
    turn = _read(messages)
    calls, answer = _plan(turn, available)
    # A decline of a question in a language the blog is not written in says so (offline_foreign);
    # a failed search found nothing yet and says that instead, and a cited answer answered.
    if calls or answer in SEARCH_FAILED.values() or _SOURCE_LINE.search(answer):
        return calls, answer
    if is_decline(answer) and (foreign := foreign_decline(turn.question, turn.reader)):
        return [], foreign
    return [], answer


def _plan(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str]:
    """The next tool calls, or the final answer text, whatever the question's language."""
    searched = [out for name, out in turn.results if name == SEARCH]
    details = [out for name, out in turn.results if name == DETAIL]
    rephrase = wants_rephrase(turn.question)
    # "explain this more simply" with no answer before it, on an article page: the article's
    # own summary is the simplest account of it a librarian can give.
    summary = bool(_SUMMARY.search(turn.question)) or (
        rephrase and not turn.earlier and turn.page is not None
    )
    if not turn.results and (reply := about_assistant(turn.question, turn.lang)):
        return [], reply
    overview = wants_overview(turn.question) and LIST in available
    if overview and not turn.results:
        # More than are shown: the reader's language goes first (compose_overview).
        return [turn.call(LIST, {"limit": LIST_LIMIT})], ""
    listed = [out for name, out in turn.results if name == LIST]
    if overview and listed:
        count = asks_how_many(turn.question)
        return [], compose_overview(listed[-1], turn.lang, requested=LIST_LIMIT, count=count)
    if not turn.results and (is_thanks(turn.question) or rephrase):
        return _no_question(turn, available)
    if not turn.results:
        if summary and turn.page and DETAIL in available and _about_page(turn.question):
            return [turn.call(DETAIL, {"article_id": turn.page})], ""
        if SEARCH in available:
            return _searches(turn, summary), ""
        return [], DONT_KNOW[turn.lang]
    # The first search is the whole question's; any others are its parts' (_searches).
    hits = _hit_list(searched[0]) if searched else []
    articles = [d for d in details if isinstance(d, dict) and "body" in d]
    if summary and articles and (not hits or not _about_other(turn, hits)):
        return [], compose_summary(articles[0], turn.lang)
    if searched and _failed(searched[0]) and not articles:
        return [], SEARCH_FAILED[turn.lang]
    if searched and not _relevant(turn.question, hits):
        # A part alone may clear the bar with its fewer words; answering it was measured to
        # answer out-of-scope questions (docs/answer-quality.md, "Eleventh pass").
        return _unplaced(turn, details, articles, available)
    # Each part's search may put first an article the whole question's search ranked under
    # the bar: its words were outweighed by the other part's. It cleared the bar for its own
    # part, and the whole question cleared it too, so it is read (docs/answer-quality.md,
    # "Fifteenth pass").
    follow_up = is_follow_up(turn)
    # A follow-up's second search is its new subject's ("what about X?"), not a part's.
    later = [_hit_list(output) for output in searched[1:]]
    part_hits = [] if follow_up else later
    chosen = with_part_tops(choose_hits(turn.question, hits), part_hits)
    if summary:
        chosen = titled_first(summary_topic(turn.question), chosen)
    elif turn.page_hit and points_at_page(turn.question):
        # "这里的上限是按工具调用次数算的吗？" on the step-limits page led with the loop article,
        # whose table names the cap too. Another article still leads when it answers better.
        chosen = page_first(chosen, turn.page_hit, MAX_READ)
    elif follow_up and later:
        # "what about the step limit?" after a question on the token budget names a new
        # subject: the article quoted before is no longer the topic. When the search with the
        # question before put that article first again, the new subject's own best article
        # answers; the combined search cleared the bar, so an unrelated subject is declined.
        if later[0] and cited_before(turn.previous_answer, hits[0]):
            chosen = page_first(
                chosen, subject_top(swapped_subject(turn.question), later[0]), MAX_READ
            )
    elif follow_up and (quoted := quoted_before(turn.previous_answer, hits)):
        # A follow-up is about what the answer before it quoted, as a question pointing at the
        # page is about the page: "那要是其中一个工具一直卡着不返回呢？" after the loop article's
        # answer led with the audit article, whose table says how a failed call is recorded.
        chosen = page_first(chosen, quoted, MAX_READ)
    if not details and DETAIL in available:
        ids = [hit["article_id"] for hit in chosen[: 1 if summary else MAX_READ]]
        return [turn.call(DETAIL, {"article_id": i}, n) for n, i in enumerate(ids)], ""
    if summary and articles:
        return [], compose_summary(articles[0], turn.lang)
    # A failed detail (or no detail tool) leaves the search excerpt to quote from.
    read = {a["article_id"]: a for a in articles}
    sources = [_source(hit, read.get(hit["article_id"])) for hit in chosen]
    answer = compose_answer(
        question=turn.question,
        context=turn.leans_on if follow_up else "",
        sources=sources,
        excerpts={h["article_id"]: h.get("excerpt", "") for h in chosen},
        lang=turn.lang,
        own=turn.system,
        parts=answered_parts(turn.question, chosen, part_hits),
        unknown=_asked_unknown(turn.question, hits),
    )
    if answer and turn.asked_in and sources and sources[0].get("language") != turn.asked_in:
        answer = f"{AS_WRITTEN[turn.lang]}\n\n{answer}"
    return [], answer or DONT_KNOW[turn.lang]


def _asked_unknown(question: str, hits: list[dict]) -> tuple[str, ...]:
    """The search's words the blog never uses ("tiktoken"), those of this question only: a
    follow-up's search carries the earlier question's words too."""
    words = hits[0].get("unknown_words") if hits else None
    asked = question.lower()
    return tuple(w for w in words or () if isinstance(w, str) and mentions(asked, w.lower()))


def _source(hit: dict, article: dict | None) -> dict:
    """The article read for a hit, or the hit's excerpt when it could not be read; in the
    hit's language, or its text's (the page on screen is read first without a search hit)."""
    source = article or {**hit, "body": hit.get("excerpt", "")}
    return {**source, "language": hit.get("language") or language(str(source.get("body")))}


def _unplaced(
    turn: _Turn, details: list[Any], articles: list[dict], available: set[str]
) -> tuple[list[ToolCall], str]:
    """A question the search could not place: when it leans on the page, a librarian looks at
    the article on screen before saying the blog has no answer (offline_page). Read once: a
    page that could not be read is not asked for again."""
    if _leans_on_page(turn) and DETAIL in available and not details:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    page = next((a for a in articles if a.get("article_id") == turn.page), None)
    if page is None:
        return [], DONT_KNOW[turn.lang]
    answer = page_answer(question=turn.question, page=page, lang=turn.lang, own=turn.system)
    return [], answer or DONT_KNOW[turn.lang]


def _leans_on_page(turn: _Turn) -> bool:
    """A question on an article page that points at it, or says too little to be about
    anything else ("where does the 60 come from?", "why 5 and not 10?")."""
    return turn.page is not None and (points_at_page(turn.question) or _says_little(turn.question))


def _no_question(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str]:
    """A message that asks nothing to search for: thanks, or "say that again more simply"
    (after an answer: where it came from; first thing on an article page: the page's summary)."""
    if is_thanks(turn.question):
        return [], WELCOME[turn.lang]
    if turn.earlier:
        return [], compose_rephrase(turn.previous_answer, turn.lang)
    if turn.page is not None and DETAIL in available:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    return [], NOTHING_BEFORE[turn.lang]


def _read(messages: list[dict]) -> _Turn:
    turn = _read_turn(messages)
    wanted = asked_language(turn.question) if turn.earlier and turn.leans_on else ""
    if not wanted:
        return turn
    # "and in Chinese?": the question answered before, asked again, answered in that language.
    return replace(turn, question=turn.leans_on, earlier=[], leans_on="", asked_in=wanted)


def _read_turn(messages: list[dict]) -> _Turn:
    users = [
        i
        for i, m in enumerate(messages)
        if m.get("role") == "user" and m.get("content") != STEP_LIMIT_NUDGE
    ]
    last = users[-1] if users else -1
    page = _page(messages)
    question = str(messages[last].get("content") or "") if last >= 0 else ""
    current = [m for m in messages[last + 1 :] if m.get("content") != STEP_LIMIT_NUDGE]
    return _Turn(
        question=without_preamble(question_fold(question.strip())),
        earlier=[question_fold(str(messages[i].get("content") or "")) for i in users[:-1]],
        page=page["article_id"] if page else None,
        page_hit=page,
        results=_tool_results(current),
        step=sum(1 for m in current if m.get("role") == "assistant") + 1,
        index=last,
        system=" ".join(
            str(m.get("content") or "")
            for m in messages
            if m.get("role") == "system" and not _READER.match(str(m.get("content") or ""))
        ),
        reader=_reader(messages),
        leans_on=_answered_question(messages, users),
        previous_answer=next(
            (
                simplified_chars(str(m.get("content") or ""))
                for m in reversed(messages[: max(last, 0)])
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        ),
    )


def _answered_question(messages: list[dict], users: list[int]) -> str:
    """The latest earlier question the blog answered, else the one just before this.

    "And how do I set it?" after a declined "capital of France?" was searched with France and
    declined again; "it" is the step limit asked about (and answered) before that.
    """
    for start, end in reversed(list(zip(users[:-1], users[1:], strict=True))):
        answers = [
            simplified_chars(str(m.get("content") or "")).strip()
            for m in messages[start + 1 : end]
            if m.get("role") == "assistant" and m.get("content")
        ]
        if answers and answers[-1] not in _FOUND_NOTHING:
            return question_fold(str(messages[start].get("content") or ""))
    return question_fold(str(messages[users[-2]].get("content") or "")) if len(users) > 1 else ""


def is_follow_up(turn: _Turn) -> bool:
    """A question that leans on the previous one: a pronoun, or almost no words of its own."""
    if not turn.earlier:
        return False
    if defined_subject(turn.question, bare=False) and not _FOLLOW_UP.search(turn.question):
        return False  # "How does HNSW work?" names what it asks about, however short
    if _FOLLOW_UP.search(turn.question):
        return True
    if turn.previous_answer.strip() in _FOUND_NOTHING:
        # "HNSW index" after a declined "sourdough recipe?" is a new topic: searched together,
        # the two found nothing again. Only a word that leans back ("那…呢") still leans.
        return False
    return _says_little(turn.question)


def _says_little(question: str) -> bool:
    """Too few words of its own to be about anything alone: it leans on the question before it,
    or on the page it is asked on."""
    chinese = language(question) == "zh"  # two-character terms: twice as many per idea
    return len(terms(question)) <= (2 * FOLLOW_UP_TERMS if chinese else FOLLOW_UP_TERMS)


def _searches(turn: _Turn, summary: bool) -> list[ToolCall]:
    """The question's search, then one per part of a question asked in two."""
    calls = [turn.call(SEARCH, {"query": search_query(turn), "limit": 5})]
    if is_follow_up(turn) and not summary and (subject := swapped_subject(turn.question)):
        return [*calls, turn.call(SEARCH, {"query": subject, "limit": 5}, 1)]
    if summary or is_follow_up(turn):
        return calls
    parts = question_parts(turn.question[:500])
    return calls + [turn.call(SEARCH, {"query": p, "limit": 5}, n) for n, p in enumerate(parts, 1)]


def with_part_tops(chosen: list[dict], parts: list[list[dict]]) -> list[dict]:
    """The articles to read: the question's top hit, then each part's top hit, then the rest.

    Searched whole, a two-part question's hits fill up with the article answering the part
    with more (or rarer) words; each part's own best article is what answers the other.
    """
    ids = {hit["article_id"] for hit in chosen[:1]}
    tops = []
    for hits in parts:
        if hits and hits[0]["article_id"] not in ids:
            tops.append(hits[0])
            ids.add(hits[0]["article_id"])
    rest = [hit for hit in chosen[1:] if hit["article_id"] not in ids]
    return [*chosen[:1], *tops, *rest][:MAX_READ]


def answered_parts(
    question: str, chosen: list[dict], parts: list[list[dict]]
) -> list[tuple[str, int]]:
    """Each part of a two-part question with the article (its index in `chosen`) its own
    search ranked first, when every part has an article of its own; [] otherwise (the whole
    question's answer serves both)."""
    texts = question_parts(question[:500]) if parts else []
    ids = [hit["article_id"] for hit in chosen]
    tops = [hits[0]["article_id"] if hits else None for hits in parts]
    if len(texts) != len(tops) or len(set(tops)) < len(tops) or not set(tops) <= set(ids):
        return []
    return [(text, ids.index(top)) for text, top in zip(texts, tops, strict=True)]


def subject_top(subject: str, hits: list[dict]) -> dict:
    """The best hit for a subject searched alone, or a nearly as relevant one titled after it.

    A short subject is matched nearly alike by every article that mentions it ("the step
    limit": the audit article 0.95, "Why step limits matter" 0.95); the article named after
    it is about it.
    """
    top = _relevance(hits[0]) or 0.0
    close = [hit for hit in hits if (_relevance(hit) or 0.0) >= SECOND_HIT_SHARE * top]
    return titled_first(subject, close)[0]


def cited_before(answer: str, hit: dict) -> bool:
    """Whether the previous answer cited the hit's article (its source lines)."""
    return hit.get("url") in set(_CITED.findall(answer))


def quoted_before(answer: str, hits: list[dict]) -> dict | None:
    """The best-ranked hit for an article the previous answer cited (its source lines), if
    the search found one; None when the search's first hit is already one of them."""
    cited = set(_CITED.findall(answer))
    quoted = next((hit for hit in hits if hit.get("url") in cited), None)
    return quoted if quoted is not None and quoted is not hits[0] else None


def _hit_list(output: Any) -> list[dict]:
    return output if isinstance(output, list) else []


def search_query(turn: _Turn) -> str:
    """The question, preceded by the previous question when this one is a follow-up; for
    "summarize the article about X", X alone."""
    if is_follow_up(turn):
        return f"{turn.leans_on} {turn.question}"[-500:]
    if _SUMMARY.search(turn.question):
        return summary_topic(turn.question)[:500]
    return turn.question[:500]


# Asking for a summary names what to summarise with words no article uses of its topic:
# "summarize" alone is a word the demo blog never writes, so "summarize the article about step
# limits" scored relevance 0.05 and was declined; "step limits" scores 0.96.
_SUMMARY_WORDS = re.compile(r"\b\w*summar\w*|" + _SUMMARY.pattern, re.IGNORECASE)
_ARTICLE_WORDS = re.compile(
    r"\b(the|a|an|your|this|that|articles?|posts?|blog posts?|pieces?|write-?ups?|page|entry|"
    r"about|on|of|for|me|give|please|pls|can you|could you|quick|short|brief|blog|say|says|"
    r"anything|something|there|any|covering|regarding|explaining)\b|"
    r"关于|有关于|有关|相关|那篇|这篇|一篇|文章|博文|一下|给我|请|帮我|简单|的|有没有|讲|写|吗|博客|里",
    re.IGNORECASE,
)


def titled_first(topic: str, hits: list[dict]) -> list[dict]:
    """The hits, the first whose title names the topic first: "any posts about streaming?"
    means "Streaming tokens to the browser", though a Chinese article that mentions 流式 once
    ranked above it on the word alone."""
    wanted = terms(topic)
    named = [hit for hit in hits if wanted and wanted <= terms(str(hit.get("title", "")))]
    return [*named[:1], *(hit for hit in hits if hit not in named[:1])]


def summary_topic(question: str) -> str:
    """What a summary request is about, its asking words removed; the question itself when
    nothing is left ("summarize" alone goes by the page, or finds nothing)."""
    topic = " ".join(_ARTICLE_WORDS.sub(" ", _SUMMARY_WORDS.sub(" ", question)).split())
    topic = topic.strip(" ?？.。!！:：,，")
    return topic if terms(topic) else question


def choose_hits(question: str, hits: list[dict]) -> list[dict]:
    """The top hit, plus lower hits that are nearly as relevant or cover other question words."""
    if not hits:
        return []
    chosen, top = [hits[0]], _relevance(hits[0])
    wanted = terms(question)
    covered = wanted & terms(_hit_text(hits[0]))
    for hit in hits[1:]:
        if len(chosen) == MAX_READ:
            break
        relevance, new = _relevance(hit), (wanted & terms(_hit_text(hit))) - covered
        close = relevance is not None and top and relevance >= SECOND_HIT_SHARE * top
        if close or len(new) >= 2:
            chosen.append(hit)
            covered |= new
    return chosen


def _relevance(hit: dict) -> float | None:
    value = hit.get("relevance")
    return float(value) if isinstance(value, int | float) else None


def _hit_text(hit: dict) -> str:
    return f"{hit.get('title', '')} {hit.get('heading', '')} {hit.get('excerpt', '')}"


def _relevant(question: str, hits: list[dict]) -> bool:
    """Hits that carry a calibrated relevance already cleared the search's bar.

    Without one (an older search), a hit counts only when it shares a word with the question.
    """
    if not hits:
        return False
    if _relevance(hits[0]) is not None:
        return True
    return bool(terms(question) & terms(_hit_text(hits[0])))


def _failed(output: Any) -> bool:
    """A tool result the loop wrote for a failed call (its messages start "Error:")."""
    return isinstance(output, str) and output.startswith("Error:")


def _about_page(question: str) -> bool:
    """ "Summarize this" on an article page means that page, unless another topic is named."""
    rest = _SUMMARY.sub(" ", _THIS_PAGE.sub(" ", question))
    return bool(_THIS_PAGE.search(question)) or len(terms(rest)) <= 1


def _about_other(turn: _Turn, hits: list[dict]) -> bool:
    return bool(hits) and turn.page is not None and hits[0].get("article_id") != turn.page


def _tool_results(turn: list[dict]) -> list[tuple[str, Any]]:
    """(tool name, parsed output) for each tool message of the current turn, in order."""
    names = {
        call["id"]: call["function"]["name"]
        for m in turn
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    }
    results = []
    for m in turn:
        if m.get("role") == "tool":
            content = m.get("content") or ""
            try:
                output = json.loads(content)
            except ValueError:
                output = content
            results.append((names.get(m.get("tool_call_id"), ""), output))
    return results


def _reader(messages: list[dict]) -> str:
    """The reader's language code from the reader-context system line, or ""."""
    for m in messages:
        match = _READER.match(str(m.get("content") or "")) if m.get("role") == "system" else None
        if match:
            return match.group(1)
    return ""


def _page(messages: list[dict]) -> dict | None:
    """The page on screen from the page-context system line, as a search hit, if any."""
    for m in messages:
        if m.get("role") == "system":
            match = _PAGE.search(str(m.get("content") or ""))
            if match:
                article_id, title, url = match.groups()
                return {"article_id": int(article_id), "title": title, "url": url, "excerpt": ""}
    return None


def _pieces(text: str, size: int = 12) -> list[str]:
    """Word-ish chunks for streaming; long words and CJK runs are cut every `size` chars."""
    pieces = []
    for token in re.findall(r"\S+\s*|\s+", text):
        pieces.extend(token[i : i + size] for i in range(0, len(token), size))
    return pieces
