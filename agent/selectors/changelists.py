"""Reads behind the admin's changelists and filters: totals in SQL, no N+1."""

from __future__ import annotations

import uuid

from django.db.models import (
    Aggregate,
    Case,
    Count,
    Exists,
    F,
    Func,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    TextField,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Left

from agent.models import Conversation, ToolCall, Turn
from agent.selectors.unanswered import UNANSWERED
from agent.tools import list_articles, search_knowledge_base
from blog.models import Article, Tag


def conversation_list_annotate(*, queryset: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """Add the changelist's per-conversation totals as correlated subqueries (no N+1)."""
    # Subqueries rather than joins: a filter or search on turns can then never inflate a count.
    turns = Turn.objects.filter(conversation=OuterRef("pk")).order_by()
    calls = ToolCall.objects.filter(turn__conversation=OuterRef("pk")).order_by()

    def total(rows: QuerySet, key: str, expression: Aggregate) -> Coalesce:
        value = rows.values(key).annotate(value=expression).values("value")
        return Coalesce(Subquery(value), 0, output_field=IntegerField())

    return queryset.annotate(
        turn_count=total(turns, "conversation", Count("pk")),
        step_total=total(turns, "conversation", Sum("step_count")),
        step_max=total(turns, "conversation", Max("step_count")),
        token_total=total(turns, "conversation", Sum(F("input_tokens") + F("output_tokens"))),
        # Some turn had a model that counts tokens; the offline model's alone count none.
        tokens_counted=Exists(turns.filter(offline=False)),
        last_status=Subquery(turns.order_by("-index").values("status")[:1]),
        first_question=Subquery(
            turns.order_by("index").annotate(text=Left("user_message", 160)).values("text")[:1]
        ),
        had_tool_error=Exists(calls.filter(ToolCall.OUTCOMES["error"])),
    )


def conversation_filter(
    *,
    queryset: QuerySet[Conversation],
    turn_status: str | None = None,
    step_limit: bool | None = None,
    tool_error: bool | None = None,
    model: str | None = None,
    reader_deleted: bool | None = None,
    search: str = "",
) -> QuerySet[Conversation]:
    """Narrow conversations by what happened in their turns, each test an EXISTS."""
    turns = Turn.objects.filter(conversation=OuterRef("pk"))
    if reader_deleted is not None:
        queryset = queryset.filter(hidden_at__isnull=not reader_deleted)
    if turn_status:
        queryset = queryset.filter(Exists(turns.filter(status=turn_status)))
    if step_limit is not None:
        hit = Exists(turns.filter(status=Turn.Status.MAX_STEPS))
        queryset = queryset.filter(hit if step_limit else ~hit)
    if tool_error is not None:
        failed = Exists(
            ToolCall.objects.filter(ToolCall.OUTCOMES["error"], turn__conversation=OuterRef("pk"))
        )
        queryset = queryset.filter(failed if tool_error else ~failed)
    if model:
        queryset = queryset.filter(Exists(turns.filter(model=model)))
    if ids := log_ids(search):
        # Ids copied from a log line ("[turn <id>]", turn_id, conversation_id, trace_id): the
        # conversation's, one of its turns' or a trace's; the line's other words are not said.
        for found in ids:
            tied = Q(pk=found) | Q(trace_id=found.hex)
            queryset = queryset.filter(Q(pk=found) | Exists(turns.filter(tied)))
        return queryset
    for word in search.split():
        said = Q(user_message__icontains=word) | Q(answer__icontains=word)
        queryset = queryset.filter(Exists(turns.filter(said)))
    return queryset


def log_ids(search: str) -> list[uuid.UUID]:
    """The ids the logs print found in `search` (UUIDs, or a trace's 32 hex digits)."""
    found = []
    for word in search.split():
        try:
            found.append(uuid.UUID(word.strip("[](){}<>\"',;")))
        except ValueError:
            continue
    return found


def turn_filter_log_id(*, queryset: QuerySet[Turn], search: str) -> QuerySet[Turn] | None:
    """The turns the logs' ids in `search` name (turn, conversation or trace); None if none."""
    ids = log_ids(search)
    if not ids:
        return None
    for found in ids:
        queryset = queryset.filter(Q(pk=found) | Q(conversation_id=found) | Q(trace_id=found.hex))
    return queryset


def turn_models() -> list[str]:
    """Return the distinct model names turns were answered with."""
    rows = Turn.objects.exclude(model="").order_by("model").values_list("model", flat=True)
    return list(rows.distinct())


def turn_list_annotate(*, queryset: QuerySet[Turn]) -> QuerySet[Turn]:
    """Defer the long texts and count each turn's tool calls in SQL."""
    calls = ToolCall.objects.filter(turn=OuterRef("pk")).order_by().values("turn")
    return queryset.defer("answer", "error", "citations").annotate(
        tool_call_count=Coalesce(Subquery(calls.annotate(n=Count("pk")).values("n")), 0),
        tool_error_count=Coalesce(
            Subquery(calls.filter(ToolCall.OUTCOMES["error"]).annotate(n=Count("pk")).values("n")),
            0,
        ),
    )


# What the tool call list shows of each call's arguments: enough for a search's query.
ARGUMENTS_PREVIEW_CHARS = 120
# The tools whose result is what they found: a list of hits, or a sentence saying there were none.
FOUND_BY = (search_knowledge_base.name, list_articles.name)


def toolcall_list_annotate(*, queryset: QuerySet[ToolCall]) -> QuerySet[ToolCall]:
    """Defer arguments and results; bring the conversation id along for links, and the start
    of the arguments as JSON text (the list said which tool ran, never what it was asked)."""
    return (
        queryset.defer("arguments", "result")
        .annotate(
            conversation_pk=F("turn__conversation_id"),
            turn_index=F("turn__index"),
            arguments_text=Left(Cast("arguments", TextField()), ARGUMENTS_PREVIEW_CHARS),
            arguments_query_type=Func(
                F("arguments__query"), function="jsonb_typeof", output_field=TextField()
            ),
            # What a list or a search found: its array's length, or its "No relevant content
            # found." text. Not an article's record: its body would be read for nothing.
            result_type=Case(
                When(
                    name__in=FOUND_BY,
                    then=Func(F("result"), function="jsonb_typeof", output_field=TextField()),
                )
            ),
        )
        .annotate(
            result_count=Case(
                When(
                    result_type="array",
                    then=Func(
                        F("result"), function="jsonb_array_length", output_field=IntegerField()
                    ),
                )
            ),
        )
        .annotate(
            # A search's query alone: in the JSON it came after '"limit": 5', past the cut.
            # Text only: '"query": 5' read “5”, hiding why the call was refused.
            arguments_query=Case(
                When(
                    arguments_query_type="string",
                    then=Left(KT("arguments__query"), ARGUMENTS_PREVIEW_CHARS),
                )
            ),
        )
        .annotate(
            # The article a call names by id: '{"article_id": 16}' told a reviewer nothing.
            arguments_article=Case(
                # The model's own argument: cast only what is a number, or the whole list fails.
                When(
                    arguments__article_id__regex=r"^[0-9]{1,9}$",
                    then=Cast(KT("arguments__article_id"), IntegerField()),
                ),
            ),
        )
        .annotate(
            arguments_article_title=Subquery(
                Article.objects.filter(pk=OuterRef("arguments_article")).values("title")[:1]
            ),
        )
    )


def toolcall_filter(*, queryset: QuerySet[ToolCall], outcome: str) -> QuerySet[ToolCall]:
    """Narrow tool calls to one outcome: ok, error, refused, cancelled or not_executed."""
    outcomes = ToolCall.OUTCOMES
    return queryset.filter(outcomes[outcome]) if outcome in outcomes else queryset


# A turn's feedback as the turn admin filters it: each vote, no vote, or a written comment.
FEEDBACK = {
    "up": Q(vote=Turn.Vote.UP),
    "down": Q(vote=Turn.Vote.DOWN),
    "none": Q(vote=""),
    "comment": ~Q(feedback_comment=""),
}


# "No" is the Unanswered page's and the dashboard's rule: small talk is left out (a "thanks!"
# cites nothing and declines nothing, and read as a question the blog missed), and so are
# turns still running or cut off (the dashboard's "Unanswered 2" opened a list of 4).
ANSWERED = {
    "yes": Q(answered=True),
    "no": UNANSWERED,
    "small_talk": Q(small_talk=True),
}


def turn_filter_answered(*, queryset: QuerySet[Turn], answered: str) -> QuerySet[Turn]:
    """Narrow turns to answered, not answered (small talk aside) or small talk (ANSWERED)."""
    return queryset.filter(ANSWERED[answered]) if answered in ANSWERED else queryset


def turn_filter_feedback(*, queryset: QuerySet[Turn], feedback: str) -> QuerySet[Turn]:
    """Narrow turns to one kind of visitor feedback (a key of FEEDBACK); others leave all."""
    return queryset.filter(FEEDBACK[feedback]) if feedback in FEEDBACK else queryset


def tag_list_annotate_conversations(*, queryset: QuerySet[Tag]) -> QuerySet[Tag]:
    """Add how many conversations started on an article carrying each tag (`conversation_count`)."""
    slugs = Article.objects.filter(tags=OuterRef(OuterRef("pk"))).values("slug")
    count = (
        Conversation.objects.filter(page__in=slugs)
        .order_by()
        .annotate(value=Func(F("pk"), function="COUNT"))
        .values("value")
    )
    return queryset.annotate(
        conversation_count=Coalesce(Subquery(count), 0, output_field=IntegerField())
    )


def conversation_filter_tag(
    *, queryset: QuerySet[Conversation], slug: str
) -> QuerySet[Conversation]:
    """The conversations that started on an article carrying the tag `slug`."""
    return queryset.filter(page__in=Article.objects.filter(tags__slug=slug).values("slug"))
