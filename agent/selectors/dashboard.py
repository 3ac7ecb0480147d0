"""The assistant's numbers for the admin dashboard, aggregated in PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Aggregate, Count, FloatField, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from agent.answered import FINISHED
from agent.models import ToolCall, Turn
from agent.selectors.unanswered import UNANSWERED


class PercentileCont(Aggregate):
    """PostgreSQL's percentile_cont: the interpolated percentile, computed in SQL."""

    function = "PERCENTILE_CONT"
    name = "PercentileCont"
    output_field = FloatField()
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)%(filter)s"

    def __init__(self, expression: str, fraction: float, **extra: Any) -> None:
        # The fraction is spliced into the SQL, so only a validated float may get there.
        if not 0.0 <= float(fraction) <= 1.0:
            raise ValueError("fraction must be between 0 and 1")
        super().__init__(expression, fraction=repr(float(fraction)), **extra)


@dataclass(frozen=True)
class ToolStats:
    name: str
    calls: int
    executed_calls: int
    errors: int
    refused: int  # the model's arguments did not fit: its mistake, not the tool's error
    p50_ms: float | None
    p95_ms: float | None

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.executed_calls if self.executed_calls else None


@dataclass(frozen=True)
class DayStats:
    day: date
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True)
class Dashboard:
    since: date
    until: date
    turns: int
    conversations: int
    unanswered: int
    unanswered_while_indexing: int
    finished: int
    voted: int
    downvoted: int
    turn_p50_ms: float | None
    turn_p95_ms: float | None
    ttft_p50_ms: float | None
    days: list[DayStats]
    outcomes: list[tuple[str, str, int]]
    step_counts: list[tuple[int, int]]
    tools: list[ToolStats]

    @property
    def vote_rate(self) -> float | None:
        """Share of finished answers the visitor voted on."""
        return self.voted / self.finished if self.finished else None

    @property
    def downvote_rate(self) -> float | None:
        """Share of votes that were thumbs down."""
        return self.downvoted / self.voted if self.voted else None

    @property
    def tool_calls(self) -> int:
        return sum(tool.executed_calls for tool in self.tools)

    @property
    def tool_errors(self) -> int:
        return sum(tool.errors for tool in self.tools)

    @property
    def tool_error_rate(self) -> float | None:
        return self.tool_errors / self.tool_calls if self.tool_calls else None


def _tool_stats(*, turns: QuerySet[Turn]) -> list[ToolStats]:
    # Calls the step limit stopped never ran: no latency, and not an error of the tool; nor is
    # a call cancelled as it ran (Stop, or the visitor left).
    executed = Q(executed=True)
    rows = (
        ToolCall.objects.filter(turn__in=turns)
        .values("name")
        .annotate(
            calls=Count("pk"),
            executed_calls=Count("pk", filter=executed),
            errors=Count("pk", filter=ToolCall.OUTCOMES["error"]),
            refused=Count("pk", filter=ToolCall.OUTCOMES["refused"]),
            p50_ms=PercentileCont("duration_ms", 0.5, filter=executed),
            p95_ms=PercentileCont("duration_ms", 0.95, filter=executed),
        )
        .order_by("name")
    )
    return [ToolStats(**row) for row in rows]


def dashboard_metrics(*, days: int = 30, now: datetime | None = None) -> Dashboard:
    """Return the assistant's numbers for the last `days` days, aggregated in SQL."""
    now = now or timezone.now()
    until = timezone.localdate(now)
    since = until - timedelta(days=days - 1)
    start = timezone.make_aware(datetime.combine(since, time.min))
    turns = Turn.objects.filter(started_at__gte=start, started_at__lte=now).order_by()
    summary = turns.aggregate(
        turns=Count("pk"),
        conversations=Count("conversation", distinct=True),
        turn_p50_ms=PercentileCont("duration_ms", 0.5),
        turn_p95_ms=PercentileCont("duration_ms", 0.95),
        ttft_p50_ms=PercentileCont("time_to_first_token_ms", 0.5),
        unanswered=Count("pk", filter=UNANSWERED),
        unanswered_while_indexing=Count("pk", filter=UNANSWERED & Q(index_incomplete=True)),
        finished=Count("pk", filter=Q(status__in=FINISHED)),
        voted=Count("pk", filter=~Q(vote="")),
        downvoted=Count("pk", filter=Q(vote=Turn.Vote.DOWN)),
    )
    daily = turns.annotate(day=TruncDate("started_at")).values("day")
    by_day = {
        row["day"]: DayStats(**row)
        for row in daily.annotate(
            turns=Count("pk"), tokens_in=Sum("input_tokens"), tokens_out=Sum("output_tokens")
        )
    }
    by_status = dict(turns.values_list("status").annotate(n=Count("pk")))
    by_steps = dict(turns.values_list("step_count").annotate(n=Count("pk")))
    calendar = [since + timedelta(days=offset) for offset in range(days)]
    return Dashboard(
        since=since,
        until=until,
        **summary,
        days=[by_day.get(day, DayStats(day)) for day in calendar],
        # Running turns show only while there are some: they are not an outcome yet.
        outcomes=[
            (value, label, by_status.get(value, 0))
            for value, label in Turn.Status.choices
            if value != Turn.Status.RUNNING or by_status.get(value)
        ],
        step_counts=[(n, by_steps.get(n, 0)) for n in range(max(by_steps, default=0) + 1)],
        tools=_tool_stats(turns=turns),
    )
