"""What the offline planner reads from the messages: the question and its turn so far.

The current question, the earlier ones, the page on screen and the reader's language (from
the system lines), the tool results of this turn, and the earlier question a follow-up leans
on: the last one the blog answered, since a declined one names no topic. "And in Chinese?"
is read as the question answered before, asked again in that language.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from agent.llm.base import ToolCall
from agent.llm.offline_ask import the_ask
from agent.llm.offline_overview import wants_overview, without_preamble
from agent.llm.offline_replies import found_nothing
from agent.llm.offline_swap import asked_language
from agent.llm.offline_text import answer_language
from agent.llm.offline_tools import SEARCH
from agent.prompts import PAGE_CONTEXT_PREFIX, READER_LANGUAGE_PREFIX, STEP_LIMIT_NUDGE
from agent.small_talk import is_small_talk
from blog.script import is_traditional, question_fold, simplified_chars, to_traditional

MAX_QUERY = 500  # the search tool's limit on a query (agent/tools/search_knowledge_base.py)
# The title is a JSON string (agent.prompts.quoted_title).
_PAGE = re.compile(re.escape(PAGE_CONTEXT_PREFIX) + r'(\d+) ("(?:[^"\\]|\\.)*") \((\S+)\)')
_READER = re.compile(re.escape(READER_LANGUAGE_PREFIX) + r"\w+ \(([\w-]+)\)")


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
    answers: str = ""  # every answer before this question, joined: what was said already
    leans_on: str = ""  # the earlier question a follow-up leans on: the last one answered
    reader: str = ""  # the language the visitor reads the site in ("zh-hans"), if known
    asked_in: str = ""  # the language a follow-up asked the last answer in ("and in Chinese?")
    ask: str = ""  # the sentences that ask, without the scene set before them (offline_ask)
    scene: str = ""  # the scene's words the ask does not use ("I'm building a Django site")
    typed: str = ""  # the visitor's message as typed, before folding

    @property
    def lang(self) -> str:
        """The answer's language (its frame, its declines); matching words goes by the
        question's own (`language(question)`)."""
        return self.asked_in or answer_language(self.question, self.reader)

    def call(self, name: str, arguments: dict, n: int = 0) -> ToolCall:
        call_id = f"call_offline_{self.index}_{self.step}_{n}"
        if name == SEARCH and isinstance(query := arguments.get("query"), str):
            arguments = {**arguments, "query": as_typed(query, self.typed)}
        return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))


def as_typed(query: str, typed: str) -> str:
    """A search's query in the visitor's own script and words, where the search reads both the
    same: it folds every query (`question_fold`) before anything else, so it finds exactly what
    the folded one finds.

    The planner matches folded text, Simplified and the mainland's words, and searched with it:
    a reader in Taipei who asked "什麼是混合檢索？" saw the panel say it searched for
    "什么是混合检索？", and the transcript said the same. The whole question is shown as typed;
    a part of it, or a rewording, in Traditional characters when the visitor wrote them.
    """
    if not typed or query.isascii():
        return query
    folded = question_fold(query.strip())
    if len(typed) <= MAX_QUERY and question_fold(typed) == folded:
        return typed
    if not is_traditional(typed):
        return query
    shown = to_traditional(query)
    return shown if question_fold(shown.strip()) == folded else query


def _read(messages: list[dict]) -> _Turn:
    turn = _read_turn(messages)
    wanted = asked_language(turn.question) if turn.earlier and turn.leans_on else ""
    if not wanted:
        return turn
    # "and in Chinese?": the question answered before, asked again as it was asked then, so a
    # follow-up keeps the question it leaned on (alone, "and how do I tune it?" lost its
    # subject), and answered in that language.
    before = _read(messages[: _answered_at(messages, _user_messages(messages)) + 1])
    return replace(
        turn,
        question=before.question,
        ask=before.ask,
        scene=before.scene,
        earlier=before.earlier,
        leans_on=before.leans_on,
        previous_answer=before.previous_answer,
        answers=before.answers,
        asked_in=wanted,
    )


def _user_messages(messages: list[dict]) -> list[int]:
    """Where the visitor's messages are (the loop's nudge at the step limit is not one)."""
    return [
        i
        for i, m in enumerate(messages)
        if m.get("role") == "user" and m.get("content") != STEP_LIMIT_NUDGE
    ]


def _read_turn(messages: list[dict]) -> _Turn:
    users = _user_messages(messages)
    last = users[-1] if users else -1
    page = _page(messages)
    question = str(messages[last].get("content") or "") if last >= 0 else ""
    current = [m for m in messages[last + 1 :] if m.get("content") != STEP_LIMIT_NUDGE]
    message = without_preamble(question_fold(question.strip()))
    ask = the_ask(message)  # what it asks, apart from the scene it sets (offline_ask)
    return _Turn(
        typed=question.strip(),
        question=message,
        ask=ask.question,
        scene=ask.scene,
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
        answers="\n\n".join(
            simplified_chars(str(m.get("content") or ""))
            for m in messages[: max(last, 0)]
            if m.get("role") == "assistant" and m.get("content")
        ),
    )


def _answered_question(messages: list[dict], users: list[int]) -> str:
    """The latest earlier question the blog answered, else the one just before this.

    "And how do I set it?" after a declined "capital of France?" was searched with France and
    declined again; "it" is the step limit asked about (and answered) before that.
    """
    if len(users) < 2:
        return ""
    asked = question_fold(str(messages[_answered_at(messages, users)].get("content") or ""))
    # "hi" or "what can you do?" names no topic to lean on: "怎么做酸面包？" after "你能做什么？"
    # was searched as "你能做什么？ 怎么做酸面包？".
    return "" if names_no_topic(asked) else asked


def names_no_topic(question: str) -> bool:
    """A greeting, thanks, or a question about the assistant or the blog as a whole."""
    return is_small_talk(question) or wants_overview(question)


def _answered_at(messages: list[dict], users: list[int]) -> int:
    """Where _answered_question's question is among the messages (of two user messages or more):
    the latest answered that names a topic, else the one just before this."""
    for start, end in reversed(list(zip(users[:-1], users[1:], strict=True))):
        answers = [
            simplified_chars(str(m.get("content") or "")).strip()
            for m in messages[start + 1 : end]
            if m.get("role") == "assistant" and m.get("content")
        ]
        asked = question_fold(str(messages[start].get("content") or ""))
        if answers and not found_nothing(answers[-1]) and not names_no_topic(asked):
            return start
    return users[-2]


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
                return {
                    "article_id": int(article_id),
                    "title": json.loads(title),
                    "url": url,
                    "excerpt": "",
                }
    return None
