"""The reviewers' admin: conversations as transcripts, turns and tool calls, all read-only."""

from django.contrib import admin
from django.contrib.admin.utils import display_for_value
from django.template.defaultfilters import linebreaksbr
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import Truncator, capfirst
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext, pgettext_lazy

from agent import admin_views, selectors
from agent.admin_tags import ConversationTagFilter
from agent.charts import format_ms
from agent.error_text import error_text
from agent.models import Conversation, ToolCall, Turn
from agent.templatetags.admin_tokens import token_count
from agent.templatetags.visitor_text import visitor_html
from docent.admin_lookups import BoundedLookups

# How much of a visitor's feedback comment the turn list shows; the turn's page has it all.
COMMENT_LIST_CHARS = 60
# Short words for the pills; the full label stays in the tooltip.
PILL_WORDS = {Turn.Status.MAX_STEPS: _("Step limit")}
OUTCOMES = {  # a tool call's outcome: (pill tone, word)
    "ok": ("done", _("OK")),
    "error": ("error", _("Error")),
    "refused": ("max_steps", _("Invalid arguments")),
    "cancelled": ("cancelled", _("Cancelled")),
    "not_executed": ("skipped", _("Not executed")),
}


def status_pill(status: str | None) -> str:
    """Return a turn status as a coloured pill."""
    if not status:
        return "—"
    label = Turn.Status(status).label if status in Turn.Status.values else status
    word = PILL_WORDS.get(status, label)
    return format_html(
        '<span class="dc-pill dc-pill--{}" title="{}">{}</span>', status, label, word
    )


def short_time(value) -> str:
    """Return a timestamp as 'Nov 30, 14:05' in the current time zone."""
    # The format is translated: "M j" gave "十二月 2" in Chinese, where "12月2日" is written.
    return (
        date_format(localtime(value), pgettext("a short time in admin lists", "M j, H:i"))
        if value
        else "—"
    )


def transcript_link(conversation_id, index: int, text: str) -> str:
    """Return a link to one turn inside its conversation's transcript."""
    url = reverse("admin:agent_conversation_change", args=[conversation_id])
    return format_html('<a href="{}#turn-{}">{}</a>', url, index, text)


class ReadOnly:
    """Audit rows: nobody adds, changes or deletes them here, superusers included."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(BoundedLookups, ReadOnly, admin.ModelAdmin):
    """A model admin that only shows."""

    # The lists' own blanks are "—" (no page, no time): Django's "-" stood in the same rows.
    empty_value_display = "—"

    def changelist_view(self, request, extra_context=None):
        # Django titles a list nobody may change "Select conversation to view": it is a list.
        title = self.model._meta.verbose_name_plural
        return super().changelist_view(request, {"title": capfirst(title), **(extra_context or {})})


class StartedFilter(admin.DateFieldListFilter):
    """The date filter of a row's start, named as its column is ("Started", not "created at")."""

    def __init__(self, field, request, params, model, model_admin, field_path) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = _("start date")


class TurnStatusFilter(admin.SimpleListFilter):
    title = _("turn status")
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return Turn.Status.choices

    def queryset(self, request, queryset):
        return selectors.conversation_filter(queryset=queryset, turn_status=self.value())


class YesNoFilter(admin.SimpleListFilter):
    option = ""  # the conversation_filter keyword this filter sets

    def lookups(self, request, model_admin):
        return [("yes", _("Yes")), ("no", _("No"))]

    def queryset(self, request, queryset):
        if self.value() not in ("yes", "no"):
            return queryset
        options = {self.option: self.value() == "yes"}
        return selectors.conversation_filter(queryset=queryset, **options)


class StepLimitFilter(YesNoFilter):
    title = _("step limit reached")
    parameter_name = option = "step_limit"


class ToolErrorFilter(YesNoFilter):
    title = _("tool error")
    parameter_name = option = "tool_error"


class ReaderDeletedFilter(YesNoFilter):
    # Kept for review after the reader deleted them from their panel: a reviewer looking for
    # what readers regretted asking, or one who must leave them out of a report.
    title = _("deleted by the reader")
    parameter_name = option = "reader_deleted"


class ModelFilter(admin.SimpleListFilter):
    title = _("model")
    parameter_name = "model"

    def lookups(self, request, model_admin):
        return [(name, name) for name in selectors.turn_models()]

    def queryset(self, request, queryset):
        return selectors.conversation_filter(queryset=queryset, model=self.value())


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    # Narrow on purpose: it must fit beside the nav sidebar and the filters on a laptop.
    list_display = [
        "started", "question", "page_slug", "turns", "steps", "max_steps", "last_status", "tokens",
    ]  # fmt: skip
    list_display_links = ["started", "question"]
    list_filter = [
        TurnStatusFilter, ("created_at", StartedFilter), StepLimitFilter, ToolErrorFilter,
        ModelFilter, ConversationTagFilter, ReaderDeletedFilter,
    ]  # fmt: skip
    # Searched through an EXISTS in get_search_results; listed so the search box shows.
    search_fields = ["turns__user_message"]
    search_help_text = _(
        "Searches what visitors asked and what the assistant answered, or a turn, conversation "
        "or trace id copied from the logs."
    )
    list_per_page = 50

    def get_queryset(self, request):
        return selectors.conversation_list_annotate(queryset=super().get_queryset(request))

    def lookup_allowed(self, lookup, value, request) -> bool:
        # A conversation's session key is its owner's cookie, a signed-in editor's too (the
        # panel is on every page): `?session_key__startswith=` counted rows, so anyone who may
        # read conversations spelled out a superuser's key a character at a time. As Django's
        # UserAdmin refuses lookups on passwords.
        allowed = super().lookup_allowed(lookup, value, request)
        return allowed and not lookup.startswith("session_key")

    def get_search_results(self, request, queryset, search_term):
        return selectors.conversation_filter(queryset=queryset, search=search_term), False

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("dashboard/", wrap(self.dashboard_view), name="agent_dashboard"),
            path("unanswered/", wrap(self.unanswered_view), name="agent_unanswered"),
            path(
                "<path:object_id>/export/", wrap(self.export_view), name="agent_conversation_export"
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return admin_views.transcript(request, model_admin=self, object_id=object_id)

    def export_view(self, request, object_id):
        return admin_views.transcript_export(request, model_admin=self, object_id=object_id)

    def dashboard_view(self, request):
        return admin_views.dashboard(request, model_admin=self)

    def unanswered_view(self, request):
        return admin_views.unanswered(request, model_admin=self)

    @admin.display(description=_("Started"), ordering="created_at")
    def started(self, obj):
        return short_time(obj.created_at)

    @admin.display(description=_("First question"), ordering="first_question")
    def question(self, obj):
        asked = visitor_html(Truncator(obj.first_question or "—").chars(90))
        if obj.hidden_at is None:
            return asked
        # Kept for review, gone from the reader's panel: said in the row, not only the transcript.
        flag = '{} <span class="dc-flag dc-flag--muted" title="{}">{}</span>'
        return format_html(flag, asked, _("Gone from the reader's panel, kept here."), _("deleted"))

    @admin.display(description=_("Page"), ordering="page")
    def page_slug(self, obj):
        # One line, cut with an ellipsis: a long slug must not grow the row to seven lines.
        if not obj.page:
            return "—"
        return format_html('<span class="dc-slug" title="{}">{}</span>', obj.page, obj.page)

    @admin.display(description=_("Turns"), ordering="turn_count")
    def turns(self, obj):
        return obj.turn_count

    @admin.display(description=_("Steps"), ordering="step_total")
    def steps(self, obj):
        return obj.step_total

    # "Max steps" read as the step limit; it is the most steps any one turn took.
    @admin.display(description=_("Most steps in a turn"), ordering="step_max")
    def max_steps(self, obj):
        return obj.step_max

    @admin.display(description=_("Last turn"), ordering="last_status")
    def last_status(self, obj):
        if obj.had_tool_error:
            flag = '{} <span class="dc-flag" title="{}">{}</span>'
            return format_html(
                flag, status_pill(obj.last_status), _("A tool call failed in it."), _("tool error")
            )
        return status_pill(obj.last_status)

    @admin.display(description=_("Tokens"), ordering="token_total")
    def tokens(self, obj):
        return token_count(obj.token_total, counted=obj.tokens_counted)


class ToolCallInline(ReadOnly, admin.TabularInline):
    model = ToolCall
    fields = ["step", "name", "ok", "executed", "duration", "error_shown"]
    readonly_fields = fields
    extra = 0
    show_change_link = True

    @admin.display(description=_("error"))
    def error_shown(self, obj):
        return _error(obj.error)

    # Durations as people read them ("55.3 ms"), not the stored float ("55.311828999947465").
    @admin.display(description=_("Duration"))
    def duration(self, obj):
        return format_ms(obj.duration_ms)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("arguments", "result")


class FeedbackFilter(admin.SimpleListFilter):
    # Votes alone hid the turns a visitor explained (a comment) and those nobody voted on.
    title = _("visitor feedback")
    parameter_name = "feedback"

    def lookups(self, request, model_admin):
        return [
            ("up", _("Thumbs up")),
            ("down", _("Thumbs down")),
            ("comment", _("With a comment")),
            ("none", _("No vote")),
        ]

    def queryset(self, request, queryset):
        return selectors.turn_filter_feedback(queryset=queryset, feedback=self.value() or "")


class AnsweredFilter(admin.SimpleListFilter):
    # Django's yes/no on the field counted every "thanks!" among the turns not answered.
    title = _("answered")
    parameter_name = "answered"

    def lookups(self, request, model_admin):
        return [("yes", _("Yes")), ("no", _("No")), ("small_talk", _("Small talk"))]

    def queryset(self, request, queryset):
        return selectors.turn_filter_answered(queryset=queryset, answered=self.value() or "")


def _error(stored: str) -> str:
    # In the reviewer's language (the loop stores English); the stored text is in the export.
    return error_text(stored=stored) if stored else "—"


def _local(url) -> bool:
    # A citation's link is the blog's own path; anything else is not made a link.
    return isinstance(url, str) and url.startswith("/") and not url.startswith("//")


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    # What a reviewer scans for first (declined, down-voted) sits next to the status. The
    # turn's index, first-token time and model are on its page (the model is a filter too):
    # with them the list ran past 1280 px and hid the answered and vote columns.
    list_display = [
        "started", "question", "status_pill", "answered_mark", "feedback", "steps", "tool_calls",
        "tokens", "duration",
    ]  # fmt: skip
    list_display_links = ["started", "question"]
    list_filter = [
        "status", AnsweredFilter, "index_incomplete", FeedbackFilter, "offline", "model",
        ("started_at", StartedFilter),
    ]  # fmt: skip
    search_fields = ["user_message", "answer"]
    search_help_text = _(
        "Searches questions and answers, or a turn, conversation or trace id copied from the logs."
    )
    ordering = ["-started_at"]
    fields = [
        "in_transcript", "conversation", "index", "started_at", "status", "step_count",
        "question_text", "answer_text", "sources", "answered", "index_incomplete", "vote",
        "comment_text",
        "feedback_at", "error_code", "error_shown", "model",
        "offline", "input_tokens", "output_tokens", "estimated_tokens", "first_token", "duration",
        "page", "id", "trace_id",
    ]  # fmt: skip
    readonly_fields = [
        "in_transcript", "question_text", "answer_text", "sources", "comment_text", "first_token",
        "duration", "error_shown", "id",
    ]  # fmt: skip
    inlines = [ToolCallInline]

    def get_queryset(self, request):
        return selectors.turn_list_annotate(queryset=super().get_queryset(request))

    def get_search_results(self, request, queryset, search_term):
        found = selectors.turn_filter_log_id(queryset=queryset, search=search_term)
        if found is None:
            return super().get_search_results(request, queryset, search_term)
        return found, False

    @admin.display(description=_("Transcript"))
    def in_transcript(self, obj):
        text = _("Open turn %(n)s in the transcript") % {"n": obj.index}
        return transcript_link(obj.conversation_id, obj.index, text)

    @admin.display(description=_("Started"), ordering="started_at")
    def started(self, obj):
        return short_time(obj.started_at)

    @admin.display(description=_("Question"), ordering="user_message")
    def question(self, obj):
        return visitor_html(Truncator(obj.user_message).chars(80))

    # The visitor's words (and the answer, which may quote them) through visitor_html.
    @admin.display(description=_("Question"))
    def question_text(self, obj):
        return visitor_html(linebreaksbr(obj.user_message))

    # Rendered as the transcript renders it: the raw Markdown ('## …', '**m**') read as noise.
    @admin.display(description=_("Answer"))
    def answer_text(self, obj):
        if not obj.answer:
            return self.get_empty_value_display()
        # Sanitized by nh3 (blog.rendering); visitor_html then shows its bidi controls.
        html = mark_safe(selectors.turn_answer_html(answer=obj.answer))  # noqa: S308
        return format_html('<div class="dc-bubble dc-answer">{}</div>', visitor_html(html))

    # The cited articles as links, not the stored JSON ('[{"url": ..., "excerpt": ...}]').
    @admin.display(description=_("citations"))
    def sources(self, obj):
        cited = [
            (c["url"], c.get("title") or c["url"])
            for c in obj.citations
            if isinstance(c, dict) and _local(c.get("url"))
        ]
        empty = self.get_empty_value_display()
        return format_html_join("", '<div><a href="{}">{}</a></div>', cited) or empty

    # The vote alone ("Thumbs down") left out why: the visitor's comment, cut short here, whole
    # on the turn's page.
    @admin.display(description=_("feedback"), ordering="vote")
    def feedback(self, obj):
        if not obj.feedback_comment:
            return obj.get_vote_display() or self.get_empty_value_display()
        comment = visitor_html(Truncator(obj.feedback_comment).chars(COMMENT_LIST_CHARS))
        return format_html(
            '{}<div class="dc-vote-comment">“{}”</div>', obj.get_vote_display(), comment
        )

    @admin.display(description=_("error"))
    def error_shown(self, obj):
        return _error(obj.error)

    @admin.display(description=_("Feedback comment"))
    def comment_text(self, obj):
        if not obj.feedback_comment:
            return self.get_empty_value_display()
        return visitor_html(linebreaksbr(obj.feedback_comment))

    @admin.display(description=_("Status"), ordering="status")
    def status_pill(self, obj):
        return status_pill(obj.status)

    @admin.display(description=_("answered"), ordering="answered")
    def answered_mark(self, obj):
        # Small talk is neither answered nor missed: a ✗ put every "thanks!" among the declines.
        if obj.small_talk:
            return format_html('<span class="dc-pill dc-pill--skipped">{}</span>', _("Small talk"))
        if obj.status == Turn.Status.RUNNING:
            return "—"  # not decided yet: a ✗ read as a decline while the answer streamed
        return display_for_value(obj.answered, "—", boolean=True)

    @admin.display(description=_("Steps"), ordering="step_count")
    def steps(self, obj):
        return obj.step_count

    @admin.display(description=_("Tool calls"), ordering="tool_call_count")
    def tool_calls(self, obj):
        if obj.tool_error_count:
            return format_html(
                '{} <span class="dc-flag">{}</span>',
                obj.tool_call_count,
                _("%(count)s failed") % {"count": obj.tool_error_count},
            )
        return obj.tool_call_count

    @admin.display(description=_("Tokens"), ordering="input_tokens")
    def tokens(self, obj):
        return token_count(obj.total_tokens, counted=not obj.offline)

    @admin.display(description=_("Duration"), ordering="duration_ms")
    def duration(self, obj):
        return format_ms(obj.duration_ms)

    @admin.display(description=_("First token"), ordering="time_to_first_token_ms")
    def first_token(self, obj):
        return format_ms(obj.time_to_first_token_ms)


class OutcomeFilter(admin.SimpleListFilter):
    title = _("outcome")
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [(outcome, word) for outcome, (_, word) in OUTCOMES.items()]

    def queryset(self, request, queryset):
        return selectors.toolcall_filter(queryset=queryset, outcome=self.value() or "")


@admin.register(ToolCall)
class ToolCallAdmin(ReadOnlyAdmin):
    list_display = [
        "name", "arguments_short", "outcome", "found", "duration", "step", "turn_link", "started",
    ]  # fmt: skip
    list_filter = ["name", OutcomeFilter, ("started_at", StartedFilter)]
    search_fields = ["name", "call_id", "error"]
    ordering = ["-started_at"]
    fields = [
        "in_transcript", "turn", "step", "call_id", "name", "ok", "executed", "error_shown",
        "started_at", "duration", "arguments_json", "result_json",
    ]  # fmt: skip
    readonly_fields = ["in_transcript", "duration", "arguments_json", "result_json", "error_shown"]

    @admin.display(description=_("error"))
    def error_shown(self, obj):
        return _error(obj.error)

    def get_queryset(self, request):
        return selectors.toolcall_list_annotate(queryset=super().get_queryset(request))

    # One line, cut with an ellipsis; the whole JSON is on the call's page and in the transcript.
    @admin.display(description=_("Arguments"))
    def arguments_short(self, obj):
        if obj.arguments_query:
            text = f"“{obj.arguments_query}”"
        elif obj.arguments_article_title:
            text = f"“{obj.arguments_article_title}” (#{obj.arguments_article})"
        else:
            text = obj.arguments_text or ""
        return format_html('<code class="dc-args" title="{}">{}</code>', text, visitor_html(text))

    @admin.display(description=_("Outcome"), ordering="ok")
    def outcome(self, obj):
        tone, word = OUTCOMES[obj.outcome]
        return format_html('<span class="dc-pill dc-pill--{}">{}</span>', tone, word)

    # A search that found nothing read "OK" as one that found five: which searches came up
    # empty took opening each call (the panel's step says "no results"; walk 24).
    @admin.display(description=pgettext_lazy("what a tool call found", "Found"))
    def found(self, obj):
        if obj.outcome != "ok":
            return self.get_empty_value_display()
        if obj.result_count is not None:
            count = obj.result_count
            return ngettext("%(count)s result", "%(count)s results", count) % {"count": count}
        if obj.result_type == "string":  # search_knowledge_base's "No relevant content found."
            return _("no results")
        return self.get_empty_value_display()  # an article's record: its title is beside it

    @admin.display(description=_("Duration"), ordering="duration_ms")
    def duration(self, obj):
        # A call that never ran took no time: "—", as the transcript says, not "0 ms".
        return format_ms(obj.duration_ms) if obj.executed else self.get_empty_value_display()

    @admin.display(description=_("Started"), ordering="started_at")
    def started(self, obj):
        return short_time(obj.started_at)

    @admin.display(description=_("Turn"))
    def turn_link(self, obj):
        text = _("Turn %(n)s") % {"n": obj.turn_index}
        return transcript_link(obj.conversation_pk, obj.turn_index, text)

    @admin.display(description=_("Transcript"))
    def in_transcript(self, obj):
        turn = obj.turn
        text = _("Open turn %(n)s") % {"n": turn.index}
        return transcript_link(turn.conversation_id, turn.index, text)

    @admin.display(description=_("Arguments"))
    def arguments_json(self, obj):
        arguments = visitor_html(selectors.json_text(obj.arguments))
        return format_html('<pre class="dc-json">{}</pre>', arguments)

    @admin.display(description=_("Result"))
    def result_json(self, obj):
        return format_html('<pre class="dc-json">{}</pre>', selectors.json_text(obj.result))


# The default site lists models only; the two report pages join the Assistant app there.
admin.site.get_app_list = admin_views.with_report_links(admin.site, admin.site.get_app_list)
