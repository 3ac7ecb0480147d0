"""A deterministic extractive ChatModel used when no model endpoint is configured.

It works like an honest librarian: search (with the conversation's earlier question in mind
for a follow-up), read the articles whose hits cleared the search's relevance bar, and answer
with their own most relevant sentences, list items and table rows, citing every article it
quotes. When nothing clears the bar it says so, in the question's language.
No network, no randomness.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from agent.answered import is_decline
from agent.llm.base import ModelTurn, TextDelta, ToolCall, Usage
from agent.llm.offline_answer import compose_answer
from agent.llm.offline_ask import ask_searched
from agent.llm.offline_catalog import catalogue_plan
from agent.llm.offline_continuity import continued, continuity_query, covers
from agent.llm.offline_follow_up import (
    _says_little,
    cited_before,
    is_follow_up,
    leans_after_decline,
    quoted_before,
    search_query,
)
from agent.llm.offline_foreign import foreign_decline
from agent.llm.offline_frame import (
    frame_searched,
    frame_topic,
    rescued,
    unweighed,
    weighing_first,
)
from agent.llm.offline_hits import (
    MAX_READ,
    _failed,
    _hit_list,
    _relevant,
    answered_parts,
    choose_hits,
    compared_in_one,
    subject_top,
    titled_part_tops,
    with_part_tops,
)
from agent.llm.offline_more import about_answer
from agent.llm.offline_more_ask import answer_ask
from agent.llm.offline_names import mentions
from agent.llm.offline_offered import offered_plan
from agent.llm.offline_overview import (
    CLOSING_REPLIES,
    NOTHING_BEFORE,
    OVERVIEW_LIMIT,
    asks_how_many,
    compose_overview,
    compose_rephrase,
    greets_back,
    wants_overview,
    wants_rephrase,
)
from agent.llm.offline_page import page_answer, page_first, points_at_page
from agent.llm.offline_page_ask import page_ask_plan
from agent.llm.offline_page_topic import page_topic_plan
from agent.llm.offline_pagemeta import page_meta_plan
from agent.llm.offline_parts import question_parts
from agent.llm.offline_render import SOURCE, compose_summary
from agent.llm.offline_replies import (
    AS_WRITTEN,
    DONT_KNOW,
    SEARCH_FAILED,
    SEARCH_LIMITED,
    search_failed,
)
from agent.llm.offline_respell import as_searched, trusted_reading, with_reading
from agent.llm.offline_script import reader_script
from agent.llm.offline_self import about_assistant
from agent.llm.offline_summary_request import _SUMMARY, _about_page, summary_topic, titled_first
from agent.llm.offline_swap import swapped_subject
from agent.llm.offline_text import language
from agent.llm.offline_tools import DETAIL, LIST, SEARCH
from agent.llm.offline_topic import topic_step, topic_term
from agent.llm.offline_turn import MAX_QUERY, _read, _Turn
from agent.llm.offline_weigh import asks_weighing
from agent.small_talk import closing

LIST_LIMIT = 4 * OVERVIEW_LIMIT  # listed for an overview: the reader's language goes first

# The line an answer ends each article's quotes with ("Source: [Title](/articles/…/)").
_SOURCE_LINE = re.compile("^(" + "|".join(map(re.escape, SOURCE.values())) + r")\[", re.MULTILINE)


class OfflineModel:
    """Extractive planner and answerer implementing ChatModel without a language model."""

    name = "offline-extractive"
    offline = True
    max_output_tokens = None

    async def stream(
        self, messages: list[dict], tools: list[dict] | None
    ) -> AsyncIterator[TextDelta | ModelTurn]:
        # Composing an answer is pure Python (tens of ms; over 100 ms for a 2,000-character
        # question of repeated words against a long article): off the event loop, so the
        # worker's other sockets keep being served meanwhile.
        names = {t["function"]["name"] for t in tools or []}
        calls, answer, declined = await asyncio.to_thread(_planned, messages, names)
        for piece in _pieces(answer):
            yield TextDelta(piece)
        yield ModelTurn(text=answer, tool_calls=calls, usage=Usage(), declined=declined)


def _planned(messages: list[dict], available: set[str]) -> tuple[list[ToolCall], str, bool | None]:
    """`plan`, its answer in the reader's script, and whether it declined."""
    calls, answer = plan(messages, available)
    # An answer quoting articles ends each one's quotes with its source; a decline cites
    # nothing. A quote may open with words that read as a decline ("…关键词检索就找不到。"):
    # the model says it answered. Anything else (greetings, the overview) is read as text.
    declined = False if not calls and _SOURCE_LINE.search(answer) else None
    return calls, reader_script(answer, messages), declined  # matched in Simplified


def plan(messages: list[dict], available: set[str]) -> tuple[list[ToolCall], str]:
    """Return the next tool calls, or the final answer text."""
    typed = _read(messages)
    read_as = trusted_reading(typed)  # once: both readings below use it
    turn = as_searched(typed, read_as)  # "pgvecter" read as the search did: "pgvector"
    calls, answer = _plan(turn, available)
    # A decline of a question in a language the blog is not written in says so (offline_foreign);
    # a failed search found nothing yet and says that instead, and a cited answer answered.
    if calls or answer in {*SEARCH_FAILED.values(), *SEARCH_LIMITED.values()}:
        return calls, answer
    if _SOURCE_LINE.search(answer):
        return [], with_reading(answer, typed, read_as)
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
    # "一句话总结一下" after an answer asks for it shorter (offline_more), not for the outline.
    shorter = is_follow_up(turn) and answer_ask(turn.question) == "shorter"
    summary = (bool(_SUMMARY.search(turn.question)) and not shorter) or (
        rephrase and not turn.earlier and turn.page is not None
    )
    if (offered := offered_plan(turn, available)) is not None:
        return offered  # "the first one?" after a decline's offer (offline_offered)
    if turn.page is not None and (meta := _page_meta(turn, available)) is not None:
        return meta  # "when was this published?": the page's own record (offline_pagemeta)
    if (page_ask := page_ask_plan(turn, available)) is not None:
        return page_ask  # "give me an example" first thing on a page (offline_page_ask)
    if (page_topic := page_topic_plan(turn, available)) is not None:
        return page_topic  # "does it cover Redis?" on a page (offline_page_topic)
    if not turn.results and (reply := about_assistant(turn.question, turn.lang)):
        return [], reply
    if (catalogue := _catalogue(turn, available)) is not None:
        return catalogue  # "which articles are tagged postgres?": the catalogue (offline_catalog)
    overview = wants_overview(turn.question) and LIST in available
    if overview and not turn.results:
        # More than are shown: the reader's language goes first (compose_overview).
        return [turn.call(LIST, {"limit": LIST_LIMIT})], ""
    listed = [out for name, out in turn.results if name == LIST]
    if overview and listed:
        count = asks_how_many(turn.question)
        greet = greets_back(turn.typed, turn.answers)
        return [], compose_overview(
            listed[-1], turn.lang, requested=LIST_LIMIT, count=count, greet=greet
        )
    if not turn.results and (closing(turn.question) or rephrase):
        return _no_question(turn, available)
    # "Do you have anything on Redis?": the passages naming the term (offline_topic).
    term = "" if is_follow_up(turn) else topic_term(turn.question)
    if term and (step := topic_step(turn, term, SEARCH, DETAIL, available)) is not None:
        return step
    if not turn.results:
        if summary and turn.page and DETAIL in available and _about_page(turn.question):
            return [turn.call(DETAIL, {"article_id": turn.page})], ""
        if SEARCH in available:
            return _searches(turn, summary), ""
        return [], DONT_KNOW[turn.lang]
    # The first search is the whole question's; any others are its parts' (_searches), and
    # last the ask's when the message sets a scene first: it stands in when the whole misses.
    # An evaluative ask's topic alone, last of all, stands in when the whole misses (offline_frame).
    # A search made the other way after every search declined (offline_continuity) is no part.
    other_way = continuity_query(turn) if not summary and not _leans_on_page(turn) else ""
    first = len(_searches(turn, summary))
    searched, other = (searched[:first], searched[first:]) if other_way else (searched, [])
    topic = _frame_topic(turn, summary)
    rescue = rescued(turn.question, topic, searched)
    searched = frame_searched(turn.question, topic, searched)
    searched = ask_searched(turn.question, turn.ask, searched, summary or is_follow_up(turn))
    if searched and leans_after_decline(turn) and not summary:
        # Its own search first; the declined question's with it when its own found nothing.
        if _relevant(turn.question, _hit_list(searched[0])):
            searched = searched[:1]
        elif len(searched) == 1 and SEARCH in available:
            query = f"{turn.leans_on} {turn.question}"[-MAX_QUERY:]
            return [turn.call(SEARCH, {"query": query, "limit": 5}, 1)], ""
        else:
            searched = searched[1:]
    hits = _hit_list(searched[0]) if searched else []
    articles = [d for d in details if isinstance(d, dict) and "body" in d]
    if summary and articles and (not hits or not _about_other(turn, hits)):
        return [], compose_summary(articles[0], turn.lang)
    if searched and _failed(searched[0]) and not articles:
        return [], search_failed(searched[0], turn.lang)
    continues = False
    if searched and not _relevant(turn.question, hits):
        # Read the other way, the search put first the article just cited (offline_continuity).
        if other and continued(turn, _hit_list(other[0])):
            searched, hits, continues = other, _hit_list(other[0]), True
        elif other_way and not other and SEARCH in available:
            return [turn.call(SEARCH, {"query": other_way, "limit": 5})], ""
        else:
            # A part alone may clear the bar with its fewer words; answering it was measured to
            # answer out-of-scope questions (docs/answer-quality.md, "Eleventh pass").
            return _unplaced(turn, details, articles, available)
    # Each part's search may put first an article the whole question's search ranked under
    # the bar: its words were outweighed by the other part's. It cleared the bar for its own
    # part, and the whole question cleared it too, so it is read (docs/answer-quality.md,
    # "Fifteenth pass").
    follow_up = is_follow_up(turn) or continues
    # A follow-up's second search is its new subject's ("what about X?"), not a part's.
    later = [_hit_list(output) for output in searched[1:]]
    in_one = follow_up or compared_in_one(turn.question, hits)
    part_hits = [] if in_one else titled_part_tops(turn.question, later)
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
    if continues and not covers(turn, _body(articles, hits[0])):
        # The article just cited, and not about this (offline_continuity).
        return [], DONT_KNOW[turn.lang]
    if rescue and unweighed(topic, hits, articles):
        return [], DONT_KNOW[turn.lang]  # the article names the topic, says nothing against it
    # A failed detail (or no detail tool) leaves the search excerpt to quote from.
    read = {a["article_id"]: a for a in articles}
    sources = [_source(hit, read.get(hit["article_id"])) for hit in chosen]
    if follow_up and (about := about_answer(turn, sources)):
        return [], about  # "tell me more", "why?", "an example?" (offline_more)
    answer = compose_answer(
        question=turn.ask or turn.question,
        context=turn.leans_on if follow_up else "",
        sources=sources,
        excerpts={h["article_id"]: h.get("excerpt", "") for h in chosen},
        lang=turn.lang,
        own=f"{turn.system} {turn.scene}",  # the reader's scene is no topic (offline_ask)
        parts=answered_parts(turn.question, chosen, part_hits),
        unknown=_asked_unknown(turn.question, hits),
    )
    if rescue:  # the sentence that weighs against the topic is what was asked (offline_frame)
        answer = weighing_first(answer, topic, hits, articles)
    if answer and turn.asked_in and sources and sources[0].get("language") != turn.asked_in:
        answer = f"{AS_WRITTEN[turn.lang]}\n\n{answer}"
    return [], answer or DONT_KNOW[turn.lang]


def _page_meta(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    return page_meta_plan(
        question=turn.question,
        page=turn.page or 0,
        first=not turn.earlier,
        results=turn.results,
        lang=turn.lang,
        available=available,
        call=turn.call,
    )


def _catalogue(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    return catalogue_plan(
        question=turn.question,
        on_page=turn.page is not None,
        results=turn.results,
        lang=turn.lang,
        available=available,
        call=turn.call,
    )


def _asked_unknown(question: str, hits: list[dict]) -> tuple[str, ...]:
    """The search's words the blog never uses ("tiktoken"), those of this question only: a
    follow-up's search carries the earlier question's words too."""
    words = hits[0].get("unknown_words") if hits else None
    asked = question.lower()
    return tuple(w for w in words or () if isinstance(w, str) and mentions(asked, w.lower()))


def _body(articles: list[dict], hit: dict) -> str:
    """The hit's article as read, or its excerpt when it could not be read."""
    read = next((a for a in articles if a.get("article_id") == hit.get("article_id")), hit)
    return str(read.get("body") or read.get("excerpt") or "")


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
    if said := closing(turn.question):
        return [], CLOSING_REPLIES[said][turn.lang]
    if turn.earlier:
        return [], compose_rephrase(turn.previous_answer, turn.lang)
    if turn.page is not None and DETAIL in available:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    return [], NOTHING_BEFORE[turn.lang]


def _searches(turn: _Turn, summary: bool) -> list[ToolCall]:
    """The question's search, then one per part of a question asked in two."""
    calls = [turn.call(SEARCH, {"query": search_query(turn), "limit": 5})]
    if is_follow_up(turn) and not summary and (subject := swapped_subject(turn.question)):
        return [*calls, turn.call(SEARCH, {"query": subject, "limit": 5}, 1)]
    if summary or is_follow_up(turn):
        return calls
    if leans_after_decline(turn):  # alone first: the declined one's later (offline_follow_up)
        return calls
    parts = question_parts(turn.question[:MAX_QUERY])
    calls += [turn.call(SEARCH, {"query": p, "limit": 5}, n) for n, p in enumerate(parts, 1)]
    if turn.ask and turn.ask != turn.question:  # the ask alone (offline_ask)
        calls.append(turn.call(SEARCH, {"query": turn.ask[:MAX_QUERY], "limit": 5}, len(calls)))
    if topic := _frame_topic(turn, summary):  # the topic without "downsides of" (offline_frame)
        calls.append(turn.call(SEARCH, {"query": topic[:MAX_QUERY], "limit": 5}, len(calls)))
    return calls


def _frame_topic(turn: _Turn, summary: bool) -> str:
    # Only an ask that weighs has a frame: "When should I use HNSW?" is no downside asked, and
    # its "topic" search was one more search in every such turn's transcript.
    if summary or is_follow_up(turn) or not asks_weighing(turn.question):
        return ""
    return frame_topic(turn.question)


def _about_other(turn: _Turn, hits: list[dict]) -> bool:
    return bool(hits) and turn.page is not None and hits[0].get("article_id") != turn.page


def _pieces(text: str, size: int = 12) -> list[str]:
    """Word-ish chunks for streaming; long words and CJK runs are cut every `size` chars."""
    pieces = []
    for token in re.findall(r"\S+\s*|\s+", text):
        pieces.extend(token[i : i + size] for i in range(0, len(token), size))
    return pieces
