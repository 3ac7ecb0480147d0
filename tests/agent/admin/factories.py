"""Builders for conversations, turns and tool calls with known values."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.models import Conversation, ToolCall, Turn

NO_RESULTS = "No relevant content found."
_ids = itertools.count(1)


def search_hits(
    count: int = 2, *, excerpt: str = "pgvector adds a vector type to PostgreSQL."
) -> list[dict]:
    """Return search_knowledge_base results shaped like the real tool's."""
    return [
        {
            "rank": rank,
            "article_id": rank,
            "title": f"Article {rank}",
            "url": f"/articles/article-{rank}/",
            "excerpt": excerpt,
            "score": round(1 - rank / 10, 2),
        }
        for rank in range(1, count + 1)
    ]


def make_conversation(*, page: str = "", created_at: datetime | None = None) -> Conversation:
    """Create a conversation; created_at is forced past auto_now_add when given."""
    conversation = Conversation.objects.create(session_key=f"session-{next(_ids):06d}", page=page)
    if created_at is not None:
        Conversation.objects.filter(pk=conversation.pk).update(created_at=created_at)
        conversation.created_at = created_at
    return conversation


def make_turn(
    conversation: Conversation,
    *,
    index: int | None = None,
    user_message: str = "How do I store embeddings in PostgreSQL?",
    answer: str = "Use **pgvector**: it adds a `vector` column type.",
    status: str = Turn.Status.DONE,
    step_count: int = 2,
    model: str = "gpt-4o-mini",
    input_tokens: int = 100,
    output_tokens: int = 50,
    ttft: float | None = 120.0,
    duration_ms: float = 900.0,
    started_at: datetime | None = None,
    answered: bool | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> Turn:
    """Create a turn and its tool calls (dicts of make_tool_call keywords)."""
    turn = Turn.objects.create(
        conversation=conversation,
        index=index if index is not None else conversation.turns.count() + 1,
        user_message=user_message,
        answer=answer,
        status=status,
        step_count=step_count,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        time_to_first_token_ms=ttft,
        duration_ms=duration_ms,
        started_at=started_at or datetime(2026, 11, 20, 12, 0, tzinfo=UTC),
        # Finished turns count as answered unless a test says otherwise.
        answered=status == "done" if answered is None else answered,
        **fields,
    )
    for spec in tool_calls or []:
        make_tool_call(turn, **spec)
    return turn


def make_tool_call(
    turn: Turn,
    *,
    step: int = 1,
    name: str = "search_knowledge_base",
    arguments: dict | None = None,
    result: Any = None,
    ok: bool = True,
    error: str = "",
    executed: bool = True,
    duration_ms: float = 10.0,
) -> ToolCall:
    """Create one tool call in a turn."""
    if arguments is None:
        arguments = {"query": "pgvector", "limit": 5} if name == "search_knowledge_base" else {}
    return ToolCall.objects.create(
        turn=turn,
        step=step,
        call_id=f"call_{next(_ids):05d}",
        name=name,
        arguments=arguments,
        result=result,
        ok=ok,
        error=error,
        executed=executed,
        started_at=turn.started_at + timedelta(milliseconds=100 * step),
        duration_ms=duration_ms,
    )


def make_busy_conversation(*, turns: int, started_at: datetime | None = None) -> Conversation:
    """Create a conversation whose every turn searched, read an article and answered."""
    conversation = make_conversation(page="pgvector-notes", created_at=started_at)
    for index in range(1, turns + 1):
        make_turn(
            conversation,
            index=index,
            user_message=f"Question number {index} about pgvector",
            started_at=(started_at or datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
            + timedelta(minutes=index),
            tool_calls=[
                {"step": 1, "result": search_hits(2)},
                {"step": 1, "name": "get_article_detail", "arguments": {"article_id": 1},
                 "result": {"article_id": 1, "title": "Article 1", "body": "text"}},
            ],
        )  # fmt: skip
    return conversation


def build_dashboard_fixture(*, now: datetime) -> dict[str, Any]:
    """Create five turns inside the last 7 days (and one older) with known outcomes.

    Returns the numbers dashboard_metrics(days=7, now=now) must report.
    """
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    during_today = today + (now - today) / 2
    two_days_ago = today - timedelta(days=2) + timedelta(hours=12)

    first = make_conversation(created_at=during_today)
    make_turn(first, index=1, status="done", step_count=2, input_tokens=100, output_tokens=40,
              duration_ms=1000, ttft=200, started_at=during_today, vote="up", tool_calls=[
                  {"step": 1, "duration_ms": 10, "result": search_hits(1)},
                  {"step": 1, "name": "get_article_detail", "duration_ms": 30,
                   "arguments": {"article_id": 1}, "result": {"article_id": 1}},
              ])  # fmt: skip
    make_turn(first, index=2, status="max_steps", step_count=5, input_tokens=300,
              output_tokens=20, duration_ms=4000, ttft=100, started_at=during_today, answer="",
              error_code="max_steps", error="Stopped after 5 steps.", tool_calls=[
                  {"step": 1, "duration_ms": 20, "result": search_hits(1)},
                  {"step": 2, "duration_ms": 40, "result": search_hits(1)},
                  {"step": 3, "name": "get_article_detail", "duration_ms": 50, "ok": False,
                   "arguments": {"article_id": 99}, "error": "Article 99 not found."},
                  {"step": 4, "name": "list_articles", "duration_ms": 5,
                   "arguments": {"tag": None, "limit": 10}, "result": []},
                  {"step": 5, "duration_ms": 0, "executed": False},
              ])  # fmt: skip
    second = make_conversation(created_at=during_today)
    make_turn(second, index=1, status="error", step_count=1, input_tokens=50, output_tokens=0,
              duration_ms=500, ttft=None, started_at=during_today, answer="",
              error_code="model_error", error="The model endpoint failed.")  # fmt: skip
    third = make_conversation(created_at=two_days_ago)
    make_turn(third, index=1, status="done", step_count=2, input_tokens=120, output_tokens=60,
              duration_ms=2000, ttft=300, started_at=two_days_ago, answered=False,
              user_message="Do you cover Kubernetes operators?", vote="down",
              feedback_comment="It should at least point to the deployment post.",
              tool_calls=[{"step": 1, "duration_ms": 30, "result": NO_RESULTS}])  # fmt: skip
    make_turn(third, index=2, status="cancelled", step_count=1, input_tokens=10, output_tokens=5,
              duration_ms=300, ttft=150, started_at=two_days_ago, answer="",
              user_message="What about Kubernetes?",
              tool_calls=[{"step": 1, "duration_ms": 15, "result": NO_RESULTS}])  # fmt: skip
    old = make_conversation(created_at=today - timedelta(days=10))
    long_ago = today - timedelta(days=10)
    make_turn(old, index=1, step_count=3, input_tokens=999, output_tokens=999,
              started_at=long_ago, tool_calls=[{"duration_ms": 9999}])  # fmt: skip

    return {
        "turns": 5,
        "conversations": 3,
        "unanswered": 2,  # the declined turn and the one the step limit cut short
        "finished": 3,
        "voted": 2,
        "downvoted": 1,
        "turns_by_day": {today.date(): 3, (today - timedelta(days=2)).date(): 2},
        "tokens_by_day": {today.date(): (450, 60), (today - timedelta(days=2)).date(): (130, 65)},
        "outcomes": {"done": 2, "max_steps": 1, "error": 1, "cancelled": 1, "interrupted": 0},
        "step_counts": [(0, 0), (1, 2), (2, 2), (3, 0), (4, 0), (5, 1)],
        # Executed calls only; percentile_cont interpolates linearly.
        "tools": {
            "get_article_detail": {
                "calls": 2,
                "executed": 2,
                "errors": 1,
                "p50": 40.0,
                "p95": 49.0,
            },
            "list_articles": {"calls": 1, "executed": 1, "errors": 0, "p50": 5.0, "p95": 5.0},
            "search_knowledge_base": {
                "calls": 6,
                "executed": 5,
                "errors": 0,
                "p50": 20.0,
                "p95": 38.0,
            },
        },
        "tool_error_rate": 1 / 8,
        "turn_p50_ms": 1000.0,
        "turn_p95_ms": 3600.0,
        "ttft_p50_ms": 175.0,
    }


SHOWCASE_QUESTIONS = [
    ("How does pgvector's HNSW index compare to IVFFlat?", "done", 2),
    ("Can I run the assistant without an API key?", "done", 2),
    ("What does the agent do when a tool times out?", "done", 3),
    ("Do you cover Kubernetes operators?", "done", 2),
    ("怎么给 Django 配置 Channels？", "done", 2),
    ("Summarise this article", "done", 1),
    ("Tell me everything about every article", "max_steps", 5),
    ("Which embedding model does the blog use?", "error", 1),
    ("How do I stream tokens over SSE?", "cancelled", 1),
]


def build_showcase(*, now: datetime) -> Conversation:
    """Create two weeks of varied, realistic turns; return a conversation worth reading."""
    for day in range(14):
        for n, (question, status, steps) in enumerate(SHOWCASE_QUESTIONS[: 2 + (day * 7) % 8]):
            when = now - timedelta(days=day, hours=1 + n)
            conversation = make_conversation(page="hnsw-vs-ivfflat", created_at=when)
            unanswered = "Kubernetes" in question
            make_turn(
                conversation, index=1, user_message=question, status=status, step_count=steps,
                answer="" if status != "done" else "See the article.", started_at=when,
                input_tokens=400 + 90 * steps + 13 * n, output_tokens=60 + 11 * n,
                duration_ms=700 + 650 * steps + 37 * n, ttft=180 + 23 * n,
                answered=status == "done" and not unanswered,
                model="gpt-4o-mini" if day % 3 else "offline-extractive", offline=day % 3 == 0,
                tool_calls=[
                    {"step": s, "duration_ms": 18 + 7 * s + n,
                     "result": NO_RESULTS if unanswered else search_hits(3),
                     "ok": not (status == "error" and s == 1)}
                    for s in range(1, steps)
                ],
            )  # fmt: skip

    gaps = [
        ("Is there a post about async Rust?", 50), ("async rust?", 140),
        ("Do you have a post about async Rust runtimes?", 300),
        ("How do I deploy Docent on Kubernetes?", 30), ("如何把博客部署到 Kubernetes？", 200),
        ("What does the dashboard's p95 mean?", 90),
        ("Can I use SQLite instead of PostgreSQL?", 75),
        ("Can I use sqlite instead of postgres?", 400),
    ]  # fmt: skip
    for question, minutes_ago in gaps:
        asked = make_conversation(page="", created_at=now - timedelta(minutes=minutes_ago))
        search = {"arguments": {"query": question}, "result": NO_RESULTS}
        make_turn(asked, index=1, user_message=question, answered=False, step_count=2,
                  answer="I couldn't find anything about that in this blog's articles.",
                  started_at=now - timedelta(minutes=minutes_ago), tool_calls=[search])  # fmt: skip

    conversation = make_conversation(page="hnsw-vs-ivfflat", created_at=now - timedelta(minutes=9))
    make_turn(
        conversation, index=1, started_at=now - timedelta(minutes=9),
        user_message="How does pgvector's HNSW index compare to IVFFlat for a small blog?",
        answer=("For a blog-sized corpus **HNSW** is the better default: it needs no training "
                "step, keeps recall high as you add articles, and queries stay fast.\n\n"
                "- IVFFlat needs `lists` tuned and a rebuild after big changes.\n"
                "- HNSW costs more memory and a slower build, which a small blog never notices.\n\n"
                "Source: *HNSW vs IVFFlat in practice*."),
        step_count=3, input_tokens=2841, output_tokens=212, ttft=342.0, duration_ms=2870.0,
        citations=[{"article_id": 3, "title": "HNSW vs IVFFlat in practice",
                    "url": "/articles/hnsw-vs-ivfflat/"}],
        tool_calls=[
            {"step": 1, "arguments": {"query": "HNSW vs IVFFlat", "limit": 5}, "duration_ms": 41.7,
             "result": [
                 {"rank": 1, "article_id": 3, "title": "HNSW vs IVFFlat in practice",
                  "url": "/articles/hnsw-vs-ivfflat/", "score": 0.91,
                  "excerpt": "HNSW builds a layered proximity graph; IVFFlat clusters vectors "
                             "into lists and scans the closest ones. " * 3},
                 {"rank": 2, "article_id": 5, "title": "Choosing an index for pgvector",
                  "url": "/articles/choosing-an-index/", "score": 0.77,
                  "excerpt": "Start with HNSW unless memory is tight. " * 4},
             ]},
            {"step": 1, "name": "list_articles", "arguments": {"tag": "pgvector", "limit": 3},
             "duration_ms": 6.2, "result": [
                 {"article_id": 3, "title": "HNSW vs IVFFlat in practice"},
                 {"article_id": 5, "title": "Choosing an index for pgvector"}]},
            {"step": 2, "name": "get_article_detail", "arguments": {"article_id": 3},
             "duration_ms": 12.9, "result": {
                 "article_id": 3, "title": "HNSW vs IVFFlat in practice",
                 "url": "/articles/hnsw-vs-ivfflat/", "published_at": "2026-10-02",
                 "tags": ["pgvector", "postgres"],
                 "body": "Both indexes trade exactness for speed. " * 30}},
        ],
    )  # fmt: skip
    make_turn(
        conversation, index=2, started_at=now - timedelta(minutes=7),
        user_message="And does it matter for Chinese articles?",
        answer="", status="max_steps", step_count=3, input_tokens=3920, output_tokens=48,
        ttft=298.0, duration_ms=4410.0, error_code="max_steps",
        error="The assistant reached its step limit (3) before answering.",
        tool_calls=[
            {"step": 1, "arguments": {"query": "HNSW Chinese articles", "limit": 5},
             "duration_ms": 38.4, "result": NO_RESULTS},
            {"step": 2, "name": "get_article_detail", "arguments": {"article_id": 42},
             "duration_ms": 4.1, "ok": False, "error": "Article 42 is not published."},
            {"step": 3, "arguments": {"query": "中文 向量 索引", "limit": 5}, "duration_ms": 0,
             "executed": False},
        ],
    )  # fmt: skip
    return conversation
