"""An ask about the answer, sent first thing on an article page, asks about the page.

"Give me an example", "tell me more", "why?" or "show me the code" name no subject: after an
answer they ask about it (offline_more), and first thing on an article page they ask about the
article on screen. Searched blog-wide instead, "Give me an example" on the step-limits page
quoted another article's opening ("…using the Docent assistant as the running example"). A
librarian reads the page: its summary stands in for the answer before it, and the ask is
answered from the page (its examples, its code, what it says next), or with its summary.
"""

from __future__ import annotations

from agent.llm.base import ToolCall
from agent.llm.offline_more import compose_about_answer
from agent.llm.offline_more_ask import answer_ask
from agent.llm.offline_render import SOURCE, compose_summary
from agent.llm.offline_replies import DONT_KNOW
from agent.llm.offline_text import language, link_label, plain
from agent.llm.offline_tools import DETAIL
from agent.llm.offline_turn import _Turn

# "shorter", "why" and "where" need an answer before them: first thing on a page, "in short?"
# is the summary request the planner already answers, and "why?" and "where does it say
# that?" point at no claim.
_ABOUT_PAGE = frozenset({"example", "more", "code", "other", "figures"})


def page_ask_plan(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    """Read the page, then answer the ask from it; None for any other message."""
    if turn.page is None or turn.earlier or DETAIL not in available:
        return None
    kind = answer_ask(turn.question)
    if kind not in _ABOUT_PAGE:
        return None
    details = [out for name, out in turn.results if name == DETAIL]
    if not details:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    page = details[-1]
    if not isinstance(page, dict) or not page.get("body"):
        return [], DONT_KNOW[turn.lang]  # the page could not be read: asked once
    source = {**page, "language": language(str(page["body"]))}
    answer = compose_about_answer(
        kind=kind,
        question=turn.question,
        previous_answer=_as_answered(source, turn.lang),
        context=str(page.get("title") or ""),
        sources=[source],
        lang=turn.lang,
    )
    return [], answer or compose_summary(source, turn.lang)


def _as_answered(page: dict, lang: str) -> str:
    """The page's summary as an answer citing it: what the reader has read so far."""
    label = link_label(str(page.get("title") or ""))
    return f"{plain(str(page.get('summary') or ''))}\n\n{SOURCE[lang]}[{label}]({page['url']})"
