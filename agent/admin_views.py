"""The admin's own pages: a transcript, its JSON export, the dashboard, unanswered questions.

ConversationAdmin routes here through `admin_site.admin_view`, so every page is staff-only;
each view also asks the model admin for view permission on conversations.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode
from uuid import UUID

from django.contrib.admin import AdminSite, ModelAdmin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from agent import charts, selectors
from agent.models import Conversation
from agent.selectors.unanswered import UNANSWERED_GROUPED

DASHBOARD_PERIODS = (7, 30, 90)
# viewBox widths close to the drawn size, so chart text renders near its nominal size.
WIDE, HALF = 880, 430


def _allowed(request: HttpRequest, model_admin: ModelAdmin) -> None:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    # Audit rows are read-only: nothing here accepts a write, whoever asks.
    if request.method not in ("GET", "HEAD"):
        raise PermissionDenied


def _context(request: HttpRequest, model_admin: ModelAdmin, **extra) -> dict:
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "app_label": model_admin.model._meta.app_label,
        **extra,
    }


def _conversation_id(object_id: str) -> UUID:
    try:
        return UUID(unquote(object_id))
    except ValueError:
        raise Http404("No such conversation.") from None


def transcript(request: HttpRequest, *, model_admin: ModelAdmin, object_id: str) -> HttpResponse:
    """Show one conversation as a timeline: messages, steps, tool calls, answers."""
    _allowed(request, model_admin)
    found = selectors.conversation_transcript(conversation_id=_conversation_id(object_id))
    if found is None:
        raise Http404("No such conversation.")
    context = _context(
        request,
        model_admin,
        title=_("Conversation %(id)s") % {"id": str(found.conversation.pk)[:8]},
        transcript=found,
        original=found.conversation,
        duration=charts.format_ms(found.duration_ms),
    )
    return TemplateResponse(request, "admin/agent/conversation/transcript.html", context)


def transcript_export(
    request: HttpRequest, *, model_admin: ModelAdmin, object_id: str
) -> JsonResponse:
    """Download one conversation, every turn and tool call, as JSON."""
    _allowed(request, model_admin)
    conversation_id = _conversation_id(object_id)
    data = selectors.conversation_export(conversation_id=conversation_id)
    if data is None:
        raise Http404("No such conversation.")
    response = JsonResponse(
        data, encoder=DjangoJSONEncoder, json_dumps_params={"indent": 2, "ensure_ascii": False}
    )
    response["Content-Disposition"] = f'attachment; filename="conversation-{conversation_id}.json"'
    return response


def _day(value) -> str:
    # A short day for axes and tables: "Nov 5", "11月5日".
    return date_format(value, pgettext("a short day on the dashboard", "M j"))


def _turns_text(count: float) -> str:
    return ngettext("%(count)s turn", "%(count)s turns", int(count)) % {
        "count": charts.format_count(count)
    }


def _steps_text(steps: int, count: int) -> str:
    # Two counts, two plurals: "1 turn took 1 step", "3 turns took 2 steps".
    took = ngettext("took %(steps)s step", "took %(steps)s steps", steps) % {"steps": steps}
    return ngettext("%(count)s turn %(took)s", "%(count)s turns %(took)s", count) % {
        "count": count,
        "took": took,
    }


def _sentence(parts: Iterable[str]) -> str:
    # A chart's description is read out by screen readers: Chinese joins with "，" and ends "。".
    joined = pgettext("between a list's items", ", ").join(parts)
    return pgettext("a sentence made of a list", "%(list)s.") % {"list": joined}


def _charts(metrics: selectors.Dashboard) -> dict:
    days = [_day(row.day) for row in metrics.days]
    period = _("%(since)s to %(until)s") % {
        "since": _day(metrics.since),
        "until": _day(metrics.until),
    }
    tokens = [
        (_("Input"), [row.tokens_in for row in metrics.days], "input"),
        (_("Output"), [row.tokens_out for row in metrics.days], "output"),
    ]
    return {
        "turns_chart": charts.bar_chart(
            chart_id="turns-per-day",
            title=_("Turns per day"),
            desc=ngettext(
                "%(count)s turn, %(period)s.", "%(count)s turns, %(period)s.", metrics.turns
            )
            % {"count": charts.format_count(metrics.turns), "period": period},
            points=[(label, row.turns) for label, row in zip(days, metrics.days, strict=True)],
            count_text=_turns_text,
            width=WIDE,
            end_axis=True,
        ),
        "outcomes_chart": charts.hbar_chart(
            chart_id="outcomes",
            title=_("How turns ended"),
            desc=_sentence(
                pgettext("a chart's figure", "%(label)s: %(count)s")
                % {"label": label, "count": charts.format_count(n)}
                for _status, label, n in metrics.outcomes
            ),
            points=[(label, count, status) for status, label, count in metrics.outcomes],
            width=HALF,
        ),
        "steps_chart": charts.histogram(
            chart_id="step-counts",
            title=_("Steps per turn"),
            desc=_sentence(_steps_text(steps, count) for steps, count in metrics.step_counts),
            bins=[(str(steps), count) for steps, count in metrics.step_counts],
            count_text=_turns_text,
            width=HALF,
            height=180,
        ),
        "tokens_chart": charts.line_chart(
            chart_id="tokens-per-day",
            title=_("Tokens per day"),
            desc=_("Input and output tokens per day, %(period)s.") % {"period": period},
            labels=days,
            series=tokens,
            width=WIDE,
            fmt=charts.format_compact,
            floor=1000,
            end_axis=True,
        ),
        "tokens_legend": charts.legend(tokens),
    }


def dashboard(request: HttpRequest, *, model_admin: ModelAdmin) -> HttpResponse:
    """Show how the assistant is doing: volume, outcomes, steps, tool latency, tokens."""
    _allowed(request, model_admin)
    days = _period_days(request, default=30)
    metrics = selectors.dashboard_metrics(days=days)
    tokens = sum(row.tokens_in + row.tokens_out for row in metrics.days)
    # Every count grouped, the small print's too: "2327 of 3943 answers" sat under "1,891".
    count, ms = charts.format_count, charts.format_ms
    lists = _period_lists(metrics.since)
    kpis = [
        (
            _("Turns"),
            count(metrics.turns),
            ngettext(
                "in %(count)s conversation", "in %(count)s conversations", metrics.conversations
            )
            % {"count": count(metrics.conversations)},
            lists["turns"],
        ),
        (
            _("Unanswered"),
            count(metrics.unanswered),
            _unanswered_hint(metrics),
            lists["unanswered"],
        ),
        (
            _("Vote rate"),
            charts.format_percent(metrics.vote_rate),
            ngettext(
                "%(voted)s of %(finished)s answer voted on",
                "%(voted)s of %(finished)s answers voted on",
                metrics.finished,
            )
            % {"voted": count(metrics.voted), "finished": count(metrics.finished)},
            None,
        ),
        (
            _("Down-vote rate"),
            charts.format_percent(metrics.downvote_rate),
            ngettext("%(down)s of %(voted)s vote", "%(down)s of %(voted)s votes", metrics.voted)
            % {"down": count(metrics.downvoted), "voted": count(metrics.voted)},
            lists["voted_down"],
        ),
        (_("Median turn"), ms(metrics.turn_p50_ms), f"p95 {ms(metrics.turn_p95_ms)}", None),
        (_("Median first token"), ms(metrics.ttft_p50_ms), _("time to first token"), None),
        (
            _("Tool error rate"),
            charts.format_percent(metrics.tool_error_rate),
            # "0 of 1 answers voted on", "0 of 1 executed calls": the number decides the noun.
            ngettext(
                "%(errors)s of %(calls)s executed call",
                "%(errors)s of %(calls)s executed calls",
                metrics.tool_calls,
            )
            % {"errors": count(metrics.tool_errors), "calls": count(metrics.tool_calls)},
            lists["tool_errors"],
        ),
        (_("Tokens"), count(tokens), _tokens_hint(metrics, tokens), None),
    ]
    tools = [
        {
            "name": tool.name,
            "calls": tool.calls,
            "executed": tool.executed_calls,
            "errors": tool.errors,
            "refused": tool.refused,
            "error_rate": charts.format_percent(tool.error_rate),
            "p50": charts.format_ms(tool.p50_ms),
            "p95": charts.format_ms(tool.p95_ms),
        }
        for tool in metrics.tools
    ]
    context = _context(
        request,
        model_admin,
        title=_("Assistant dashboard"),
        metrics=metrics,
        days=days,
        periods=DASHBOARD_PERIODS,
        kpis=kpis,
        tools=tools,
        day_rows=[(_day(row.day), row) for row in metrics.days],
        # The offline model reports no usage: its chart was a flat line on an axis to 1k.
        tokens_reported=tokens > 0,
        unanswered_top=_unanswered_top(metrics.since),
        model_trouble=selectors.model_trouble(since=metrics.since),
        **_charts(metrics),
    )
    return TemplateResponse(request, "admin/agent/dashboard.html", context)


# The dashboard's own list of what the blog could not answer: "Unanswered 3" said how many,
# and which three, and where to write about them, took two more pages.
UNANSWERED_ON_DASHBOARD = 5


def _unanswered_top(since: date) -> list[selectors.UnansweredGroup]:
    # The dashboard's five name no "New since" article: searching for them was its slowest part.
    groups = selectors.turn_unanswered_groups(since=_day_start(since), new_since=False)
    return groups[:UNANSWERED_ON_DASHBOARD]


def _period_days(request: HttpRequest, *, default: int | None) -> int | None:
    """The report's period in days, one of DASHBOARD_PERIODS; `default` for anything else."""
    try:
        days = int(request.GET.get("days", ""))
    except ValueError:
        return default
    return days if days in DASHBOARD_PERIODS else default


def _period_since(days: int) -> date:
    """The first day of a period of `days` days ending today, as the dashboard counts it."""
    return timezone.localdate() - timedelta(days=days - 1)


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _unanswered_hint(metrics: selectors.Dashboard) -> str:
    if metrics.unanswered_while_indexing:
        # Not the blog's gap necessarily: the article may not have been searchable yet.
        return _("declined, or cited no article; %(count)s asked while indexing") % {
            "count": charts.format_count(metrics.unanswered_while_indexing)
        }
    return _("declined, or cited no article")


def _period_lists(since: date) -> dict[str, str]:
    """The admin lists behind the dashboard's figures, filtered to its period."""
    # A figure such as "Unanswered 4" was a dead end: which four meant searching the lists.
    start = timezone.make_aware(datetime.combine(since, time.min)).isoformat(sep=" ")
    turns = reverse("admin:agent_turn_changelist")
    calls = reverse("admin:agent_toolcall_changelist")
    return {
        "turns": f"{turns}?{urlencode({'started_at__gte': start})}",
        "unanswered": f"{turns}?{urlencode({'answered': 'no', 'started_at__gte': start})}",
        "voted_down": f"{turns}?{urlencode({'feedback': 'down', 'started_at__gte': start})}",
        "tool_errors": f"{calls}?{urlencode({'outcome': 'error', 'started_at__gte': start})}",
    }


def _tokens_hint(metrics: selectors.Dashboard, tokens: int) -> str:
    # The offline model reports no usage: "0" alone read as a broken counter.
    if not tokens and metrics.turns:
        return _("none reported; the offline model counts none")
    return _("input and output")


def unanswered(request: HttpRequest, *, model_admin: ModelAdmin) -> HttpResponse:
    """List what visitors asked that the blog could not answer, similar questions together."""
    _allowed(request, model_admin)
    # The first indexing (or a model switch) leaves questions unanswered that the blog covers:
    # the editor may hide them, and the page says how many there are either way.
    hide_indexing = request.GET.get("while_indexing") == "hide"
    # "What could we not answer this week?" had no answer here: the page held every question
    # ever asked. The dashboard's periods, or all of it when none is asked for.
    days = _period_days(request, default=None)
    since = _period_since(days) if days else None
    start = _day_start(since) if since else None
    groups = selectors.turn_unanswered_groups(since=start, while_indexing=not hide_indexing)
    total = sum(group.count for group in groups)
    # The grouping reads the newest 500: the page said "500 questions" of 1,903.
    asked = total
    if total >= UNANSWERED_GROUPED:
        asked = selectors.turn_unanswered_count(since=start, while_indexing=not hide_indexing)
    downvoted = selectors.turn_downvoted_count(since=start)
    context = _context(
        request,
        model_admin,
        title=_("Unanswered questions"),
        groups=groups,
        # The newest few down-voted answers; the turns list has them all. 200 cards made the
        # page 23,000 px long on a busy blog, the questions above a small part of it.
        downvoted=selectors.turn_downvoted(since=start, limit=DOWNVOTED_SHOWN),
        downvoted_count=downvoted,
        # Grouped as the dashboard's figures are, in either language ("1,903", not "1903").
        downvoted_text=charts.format_count(downvoted),
        downvoted_url=_downvoted_url(since),
        total=total,
        asked=asked,
        asked_text=charts.format_count(asked),
        while_indexing=sum(group.while_indexing for group in groups),
        hide_indexing=hide_indexing,
        days=days,
        since=since,
        until=timezone.localdate(),
        period_links=_period_links(days, hide_indexing=hide_indexing),
        indexing_query=_query(days, hide_indexing=not hide_indexing),
        # A reviewer who may only view was offered "Write an article about this": a 403 page.
        can_write=request.user.has_perm("blog.add_article"),
    )
    return TemplateResponse(request, "admin/agent/unanswered.html", context)


DOWNVOTED_SHOWN = 20


def _downvoted_url(since: date | None) -> str:
    """The turns list of down-voted answers, from the period's first day."""
    params = {"feedback": "down"}
    if since is not None:
        params["started_at__gte"] = str(_day_start(since))  # as the date filter writes it
    return f"{reverse('admin:agent_turn_changelist')}?{urlencode(params)}"


def _period_links(days: int | None, *, hide_indexing: bool) -> list[tuple[str, str, bool]]:
    """(label, query, current) for each period of the unanswered page, its other filter kept."""
    choices = [(None, _("All time"))] + [
        (period, _("%(period)s days") % {"period": period}) for period in DASHBOARD_PERIODS
    ]
    return [
        (label, _query(period, hide_indexing=hide_indexing), period == days)
        for period, label in choices
    ]


def _query(days: int | None, *, hide_indexing: bool) -> str:
    params = {"days": days} if days else {}
    if hide_indexing:
        params["while_indexing"] = "hide"
    return f"?{urlencode(params)}"


def with_report_links(site: AdminSite, get_app_list):
    """Wrap get_app_list so the index and the sidebar list the dashboard and unanswered list."""

    def app_list(request: HttpRequest, app_label: str | None = None) -> list[dict]:
        apps = get_app_list(request, app_label)
        if not site.is_registered(Conversation):
            return apps
        if not site.get_model_admin(Conversation).has_view_permission(request):
            return apps
        for app in apps:
            if app["app_label"] == "agent":
                app["models"] += [
                    _report_link(_("Dashboard"), "AssistantDashboard", "admin:agent_dashboard"),
                    _report_link(_("Unanswered questions"), "Unanswered", "admin:agent_unanswered"),
                ]
        return apps

    return app_list


def _report_link(name: str, object_name: str, url_name: str) -> dict:
    # Shaped like the model entries admin/app_list.html renders.
    return {
        "name": name,
        "object_name": object_name,
        "perms": {"view": True},
        "admin_url": reverse(url_name),
        "add_url": None,
        "view_only": True,
    }
