"""A deterministic extractive ChatModel used when no model endpoint is configured.

It plans like a careful agent would: search, read the best article, then answer with the
article's own most relevant sentences and a source link. No network, no randomness.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from agent.llm.base import ModelTurn, TextDelta, ToolCall, Usage
from agent.prompts import PAGE_CONTEXT_PREFIX, STEP_LIMIT_NUDGE

SEARCH = "search_knowledge_base"
DETAIL = "get_article_detail"
NO_RESULTS = "No relevant content found."
DONT_KNOW = {
    "en": "I couldn't find anything about that in this blog's articles.",
    "zh": "我在这个博客的文章里没有找到相关内容。",
}
SOURCE = {"en": "Source: ", "zh": "来源："}
MAX_SENTENCES = 4

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9\-']*[a-z0-9]|[a-z0-9]")
_PAGE = re.compile(re.escape(PAGE_CONTEXT_PREFIX) + r'(\d+) "(.*)" \((\S+)\)')
_ABOUT_PAGE = re.compile(
    r"summari[sz]e|summary|tl;?dr|sum up|overview|\bthis (article|post|page)\b|"
    r"总结|概括|摘要|概述|这篇|本文",
    re.IGNORECASE,
)
_SUMMARY_INTENT = re.compile(
    r"summari[sz]e|summary|tl;?dr|sum up|overview|总结|概括|摘要|概述", re.IGNORECASE
)
_STOPWORDS = frozenset(
    "a an and are about can could did does for from had has have how into its the this that "
    "these those what when where which who why will with would you your our their there then "
    "than was were been being not but any all some more most much many tell explain describe "
    "please say says said article articles post blog one two way ways use used using get".split()
)
_CJK_STOP = frozenset(
    "什么 怎么 如何 为什 哪些 一个 这个 那个 是否 可以 吗？ 文章 这篇 本文 请问 一下".split()
)


class OfflineModel:
    """Extractive planner and answerer implementing ChatModel without a language model."""

    name = "offline-extractive"
    offline = True

    async def stream(
        self, messages: list[dict], tools: list[dict] | None
    ) -> AsyncIterator[TextDelta | ModelTurn]:
        calls, answer = _plan(messages, {t["function"]["name"] for t in tools or []})
        for piece in _pieces(answer):
            yield TextDelta(piece)
        yield ModelTurn(text=answer, tool_calls=calls, usage=Usage())


def _plan(messages: list[dict], available: set[str]) -> tuple[list[ToolCall], str]:
    """Return the next tool calls, or the final answer text."""
    last_user = max(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and m.get("content") != STEP_LIMIT_NUDGE
        ),
        default=-1,
    )
    question = str(messages[last_user].get("content") or "") if last_user >= 0 else ""
    turn = [m for m in messages[last_user + 1 :] if m.get("content") != STEP_LIMIT_NUDGE]
    results = _tool_results(turn)
    lang = "zh" if _CJK_RUN.search(question) else "en"
    step = sum(1 for m in turn if m.get("role") == "assistant") + 1
    call_id = f"call_offline_{last_user}_{step}"

    detail = next((out for name, out in reversed(results) if name == DETAIL), None)
    if isinstance(detail, dict) and "body" in detail:
        return [], _answer(question, detail, lang)
    hits = next((out for name, out in reversed(results) if name == SEARCH), None)
    if hits is None:
        page = _page(messages)
        if not results and page and DETAIL in available and _ABOUT_PAGE.search(question):
            return [_call(call_id, DETAIL, {"article_id": page})], ""
        if SEARCH in available:
            return [_call(call_id, SEARCH, {"query": question[:500], "limit": 5})], ""
        return [], DONT_KNOW[lang]
    if not isinstance(hits, list) or not hits or not _relevant(question, hits[0]):
        return [], DONT_KNOW[lang]
    if DETAIL in available and detail is None:
        return [_call(call_id, DETAIL, {"article_id": hits[0]["article_id"]})], ""
    # The detail failed or tools are gone: answer from the search excerpt instead.
    return [], _answer(question, {**hits[0], "body": hits[0].get("excerpt", "")}, lang)


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


def _page(messages: list[dict]) -> int | None:
    """The article id from the page-context system line, if any."""
    for m in messages:
        if m.get("role") == "system":
            match = _PAGE.search(str(m.get("content") or ""))
            if match:
                return int(match.group(1))
    return None


def _call(call_id: str, name: str, arguments: dict) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))


def _relevant(question: str, hit: dict) -> bool:
    # The search's score is a fused rank (reciprocal-rank fusion), not an absolute relevance,
    # so a hit counts only when it shares a word (or CJK bigram) with the question.
    text = f"{hit.get('title', '')} {hit.get('excerpt', '')}"
    return bool(_terms(question) & _terms(text))


def _terms(text: str) -> set[str]:
    """Lower-cased content words plus CJK character bigrams."""
    lowered = text.lower()
    terms = {w for w in _WORD.findall(lowered) if len(w) > 2 and w not in _STOPWORDS}
    for run in _CJK_RUN.findall(lowered):
        grams = {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
        terms |= grams - _CJK_STOP
    return terms


def _answer(question: str, article: dict, lang: str) -> str:
    sentences = _sentences(_strip_markdown(str(article.get("body") or "")))
    picked = _pick(question, sentences)
    if not picked:
        return DONT_KNOW[lang]
    joiner = "" if lang == "zh" and all(_CJK_RUN.search(s) for s in picked) else " "
    source = f"{SOURCE[lang]}[{article.get('title', '')}]({article.get('url', '')})"
    return f"{joiner.join(picked)}\n\n{source}"


def _pick(question: str, sentences: list[str]) -> list[str]:
    """The most relevant sentences (query-term overlap), kept in their original order."""
    if _SUMMARY_INTENT.search(question):
        return sentences[:MAX_SENTENCES]
    query = _terms(question)
    shared = [query & _terms(sentence) for sentence in sentences]
    # A term found in many sentences says little about which one answers the question.
    frequency = {term: sum(term in terms for terms in shared) for term in query}
    score = [sum(1 / frequency[term] for term in terms) for terms in shared]
    ranked = sorted((i for i, value in enumerate(score) if value), key=lambda i: (-score[i], i))
    if not ranked:
        return sentences[:3]  # e.g. asked in another language: the article's lead
    return [sentences[i] for i in sorted(ranked[:MAX_SENTENCES])]


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|\*|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # not snake_case
    (re.compile(r"<[^>]+>"), ""),
]
_LINE_PREFIX = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9\u3400-\u9fff])|(?<=[。！？])")


def _strip_markdown(body: str) -> list[str]:
    """Plain-text paragraphs: no code blocks, headings, tables, list or emphasis syntax."""
    body = _FENCE.sub("\n", body)
    paragraphs, current = [], []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "|", "---", "***")):
            if current:
                paragraphs.append(" ".join(current))
            current = []
            continue
        text = _LINE_PREFIX.sub("", line)
        for pattern, replacement in _INLINE:
            text = pattern.sub(replacement, text)
        is_item = _LINE_PREFIX.match(line).group(0).strip() != ""  # type: ignore[union-attr]
        if is_item and current:  # each list item stands alone
            paragraphs.append(" ".join(current))
            current = []
        current.append(text.strip())
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _sentences(paragraphs: list[str]) -> list[str]:
    found = []
    for paragraph in paragraphs:
        for sentence in _SPLIT.split(paragraph):
            sentence = sentence.strip()
            # A sentence ending in a colon introduces a code block or list that was dropped.
            if sentence.endswith((":", "：")):
                continue
            if len(sentence) >= (8 if _CJK_RUN.search(sentence) else 25):
                found.append(sentence)
    return found


def _pieces(text: str, size: int = 12) -> list[str]:
    """Word-ish chunks for streaming; long words and CJK runs are cut every `size` chars."""
    pieces = []
    for token in re.findall(r"\S+\s*|\s+", text):
        pieces.extend(token[i : i + size] for i in range(0, len(token), size))
    return pieces
