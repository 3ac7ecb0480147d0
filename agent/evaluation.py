"""Answer evaluation: run eval questions through the real turn runner and score what came back.

Each question is asked the way a visitor asks it (a fresh conversation, the configured model,
the real tools), with the events collected instead of sent over a socket. Scores:

- search hit@1 / hit@5 / MRR: where a right article ranks for the query the agent searched with
  (unfiltered by the relevance bar, so the ranking itself is measured);
- answered with a right citation (in-scope), declined (out-of-scope), cited a wrong article,
  two-article questions citing both, follow-ups answered;
- key facts quoted: of the questions that list `facts`, those answered with a right citation
  whose answer contains every fact. A right citation next to the wrong figure is not an answer.

The conversations it creates are deleted afterwards, so an operator's transcripts and
unanswered-questions page stay clean.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from asgiref.sync import sync_to_async
from django.db import connections

SHORT_FACT = 4  # a key fact this short must be a word of the answer, not part of one
KINDS = ("same", "cross", "two", "table", "followup", "out")
SEARCH_DEPTH = 10
_SLUG = re.compile(r"/articles/([^/]+)/")


@dataclass(frozen=True)
class EvalItem:
    id: str
    kind: str
    lang: str
    split: str
    turns: tuple[str, ...]
    expected: tuple[str, ...]
    require_all: bool = False
    facts: tuple[str, ...] = ()
    page: str = ""  # the slug of the article on screen when the question is asked

    @property
    def in_scope(self) -> bool:
        return bool(self.expected)


@dataclass
class Outcome:
    """What one question's last turn produced."""

    id: str
    kind: str
    lang: str
    split: str
    in_scope: bool
    search_query: str = ""
    rank: int | None = None  # best rank of a right article in the unfiltered search
    search_passed: bool = False  # the relevance bar let at least one hit through
    cited: list[str] = field(default_factory=list)
    answered: bool = False
    ending: str = ""
    answer: str = ""

    def right_citation(self, expected: Iterable[str]) -> bool:
        return any(slug in self.cited for slug in expected)


class EvalFileError(ValueError):
    """The eval file has a malformed row; the message names the line."""


def items_load(path: Path) -> list[EvalItem]:
    """Read a JSONL eval file: one question per line (see bench/answer_eval.jsonl).

    Raises:
        EvalFileError: a line is not JSON or lacks id, question/turns or kind.
    """
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            turns = tuple(row.get("turns") or [row["question"]])
            items.append(
                EvalItem(
                    id=str(row["id"]),
                    kind=str(row.get("kind") or ("same" if row.get("expected") else "out")),
                    lang=str(row.get("lang") or "en"),
                    split=str(row.get("split") or "test"),
                    turns=turns,
                    expected=tuple(row.get("expected") or ()),
                    require_all=bool(row.get("require_all")),
                    facts=tuple(row.get("facts") or ()),
                    page=str(row.get("page") or ""),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise EvalFileError(f"{path}:{number}: {exc!r}") from None
    return items


def items_on_missing_pages(items: list[EvalItem]) -> list[str]:
    """Ids of the items asked on a page that is not a published article. Asked there, the
    turn is refused before it starts, and an out-of-scope row would score as declined."""
    from blog.models import Article

    pages = {item.page for item in items if item.page}
    published = set(
        Article.objects.published().filter(slug__in=pages).values_list("slug", flat=True)
    )
    return [item.id for item in items if item.page and item.page not in published]


def items_select(items: list[EvalItem], split: str) -> list[EvalItem]:
    return items if split == "all" else [item for item in items if item.split == split]


async def evaluate(
    items: list[EvalItem], *, progress: Callable[[int, int], None] | None = None
) -> list[Outcome]:
    """Ask every question through a private TurnRunner; one at a time, like one visitor each."""
    from agent.runner import TurnRunner

    runner = TurnRunner()
    session_key = f"eval-{uuid.uuid4().hex}"
    outcomes = []
    try:
        for done, item in enumerate(items, start=1):
            outcomes.append(await _ask(runner, item, session_key))
            if progress:
                progress(done, len(items))
    finally:
        await runner.saver.drain(timeout=30)
        await sync_to_async(_conversations_delete)(session_key)
        await sync_to_async(connections.close_all)()  # the worker thread's, not the caller's
    return outcomes


async def _ask(runner, item: EvalItem, session_key: str) -> Outcome:
    from agent.runner import ChatMessage, Visitor

    visitor = Visitor(session_key=session_key, client_ip="127.0.0.1")
    conversation_id = None
    events: list[dict] = []
    for text in item.turns:
        events = []

        async def emit(event: dict, sink: list[dict] = events) -> None:
            sink.append(event)

        message = ChatMessage(content=text, conversation_id=conversation_id, page=item.page)
        await runner.run(message=message, visitor=visitor, emit=emit)
        start = next((e for e in events if e["type"] == "start"), None)
        if start is None:
            break
        conversation_id = uuid.UUID(start["conversation_id"])
    return await _score(item, events)


async def _score(item: EvalItem, events: list[dict]) -> Outcome:
    final = events[-1] if events else {"type": "error", "code": "none"}
    cited = [
        m.group(1) for e in events if e["type"] == "citation" for m in [_SLUG.search(e["url"])] if m
    ]
    answered = final["type"] == "done" and bool(cited) and final.get("answered", True) is not False
    query = next(
        (
            e["arguments"].get("query", "")
            for e in events
            if e["type"] == "tool_start"
            and e["name"] == "search_knowledge_base"
            and isinstance(e["arguments"], dict)
        ),
        "",
    ) or " ".join(item.turns)
    ranked, passed = await sync_to_async(_search_ranks)(query)
    rank = min((ranked.index(slug) + 1 for slug in item.expected if slug in ranked), default=None)
    return Outcome(
        id=item.id,
        kind=item.kind,
        lang=item.lang,
        split=item.split,
        in_scope=item.in_scope,
        search_query=query,
        rank=rank,
        search_passed=passed,
        cited=list(dict.fromkeys(cited)),
        answered=answered,
        ending=final["type"] if final["type"] == "done" else final.get("code", "error"),
        answer="".join(e["content"] for e in events if e["type"] == "text"),
    )


def _search_ranks(query: str) -> tuple[list[str], bool]:
    """Article slugs in unfiltered rank order, and whether any hit clears the relevance bar."""
    from django.conf import settings

    from blog.search import article_search

    hits = article_search(query=query, limit=SEARCH_DEPTH, min_relevance=0.0)
    slugs = [m.group(1) for hit in hits for m in [_SLUG.search(hit.url)] if m]
    passed = any(hit.relevance >= settings.SEARCH_MIN_RELEVANCE for hit in hits)
    return slugs, passed


def _conversations_delete(session_key: str) -> None:
    from agent.models import Conversation

    Conversation.objects.filter(session_key=session_key).delete()


# ---------------------------------------------------------------- report


def report(items: list[EvalItem], outcomes: list[Outcome]) -> dict[str, dict]:
    """Figures per group: overall, per kind, per language (keys like 'all', 'kind=cross')."""
    by_id = {item.id: item for item in items}
    groups: dict[str, list[Outcome]] = {"all": outcomes}
    for outcome in outcomes:
        groups.setdefault(f"kind={outcome.kind}", []).append(outcome)
        groups.setdefault(f"lang={outcome.lang}", []).append(outcome)
    return {name: _figures(group, by_id) for name, group in groups.items()}


def _figures(outcomes: list[Outcome], by_id: dict[str, EvalItem]) -> dict:
    scoped = [o for o in outcomes if o.in_scope]
    out = [o for o in outcomes if not o.in_scope]
    two = [o for o in scoped if by_id[o.id].require_all]
    follow = [o for o in scoped if len(by_id[o.id].turns) > 1]
    ranks = [o.rank for o in scoped]
    return {
        "n": len(outcomes),
        "in_scope": len(scoped),
        "out_of_scope": len(out),
        "hit@1": _share(ranks, lambda r: r == 1),
        "hit@5": _share(ranks, lambda r: r is not None and r <= 5),
        "mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 3) if ranks else None,
        "search_passed_in_scope": _share(scoped, lambda o: o.search_passed),
        "search_rejected_out_of_scope": _share(out, lambda o: not o.search_passed),
        "answered_right_citation": _share(
            scoped, lambda o: o.answered and o.right_citation(by_id[o.id].expected)
        ),
        "declined_out_of_scope": _share(out, lambda o: not o.answered),
        "wrong_citation": _share(
            outcomes, lambda o: any(slug not in by_id[o.id].expected for slug in o.cited)
        ),
        "two_cited_both": _share(two, lambda o: set(by_id[o.id].expected) <= set(o.cited)),
        "followup_answered": _share(
            follow, lambda o: o.answered and o.right_citation(by_id[o.id].expected)
        ),
        "facts_quoted": _share(
            [o for o in scoped if by_id[o.id].facts],
            lambda o: (
                o.answered
                and o.right_citation(by_id[o.id].expected)
                and _quotes(o.answer, by_id[o.id].facts)
            ),
        ),
    }


def _quotes(answer: str, facts: tuple[str, ...]) -> bool:
    """Whether `answer` contains every fact, ignoring case and runs of white space.

    A number must not run on into more digits ("6" is not quoted by "60") and a short word
    must be a word of its own ("two" is not quoted by "network"); a longer word may take an
    ending ("WebSocket" is quoted by "WebSockets"). Chinese has no word boundaries to ask for.
    """
    text = _squeeze(answer)
    return all(re.search(_fact_pattern(_squeeze(fact)), text) for fact in facts)


def _fact_pattern(fact: str) -> str:
    short = len(fact) <= SHORT_FACT
    return _edge(fact[:1], short, r"(?<!{})") + re.escape(fact) + _edge(fact[-1:], short, r"(?!{})")


def _edge(char: str, short: bool, look: str) -> str:
    if char.isascii() and char.isdigit():
        return look.format("[0-9]")
    if char.isascii() and char.isalpha() and short:
        return look.format("[a-z0-9]")
    return ""


def _squeeze(text: str) -> str:
    return " ".join(text.split()).casefold()


def _share(values: list, test: Callable) -> float | None:
    return round(sum(1 for value in values if test(value)) / len(values), 3) if values else None


COLUMNS = (
    ("n", "n"),
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("mrr", "MRR"),
    ("answered_right_citation", "answered, right cite"),
    ("declined_out_of_scope", "out-of-scope declined"),
    ("wrong_citation", "wrong cite"),
    ("two_cited_both", "two: both cited"),
    ("followup_answered", "follow-up answered"),
    ("facts_quoted", "key facts quoted"),
)


def report_table(figures: dict[str, dict]) -> str:
    """A Markdown table, one row per group."""
    lines = [
        "| group | " + " | ".join(title for _, title in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for name, row in figures.items():
        cells = ["–" if row[key] is None else str(row[key]) for key, _ in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def outcomes_json(outcomes: list[Outcome], figures: dict[str, dict]) -> str:
    return json.dumps(
        {"figures": figures, "outcomes": [asdict(o) for o in outcomes]},
        ensure_ascii=False,
        indent=1,
    )


def run_blocking(
    items: list[EvalItem], *, offline: bool = False, progress: Callable | None = None
) -> list[Outcome]:
    """`evaluate` from synchronous code (the management command).

    The per-visitor message limits are lifted for the run (one operator asking a hundred
    questions is not abuse); `offline` forces the built-in model whatever is configured.
    """
    from django.test import override_settings

    overrides: dict = {
        "AGENT_MESSAGES_PER_MINUTE": 10**9,
        "AGENT_MESSAGES_PER_MINUTE_PER_IP": 10**9,
        "AGENT_MESSAGES_PER_DAY_PER_IP": 10**9,
        "AGENT_TURNS_PER_IP": 10**9,
        "SEARCH_REQUESTS_PER_MINUTE_PER_IP": 10**9,  # the model's searches count there too
    }
    if offline:
        overrides |= {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    with override_settings(**overrides):
        return asyncio.run(evaluate(items, progress=progress))
