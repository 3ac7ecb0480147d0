"""Conversations as the admins review them: every turn, every tool call, how it ended."""

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from agent.loop import CANCELLED_CALL, INVALID_ARGUMENTS, NOT_AN_OBJECT


class ConversationQuerySet(models.QuerySet):
    def owned(self, session_key: str) -> "ConversationQuerySet":
        """The session's conversations, less those its reader deleted from the panel."""
        return self.filter(session_key=session_key, hidden_at__isnull=True)


class Conversation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Conversations belong to the visitor's session; another session's id is refused. It holds
    # the key's digest (config.sessions.session_digest): the key is the cookie, an editor's
    # admin session, and the row is no place for it.
    session_key = models.CharField(_("session"), max_length=64, db_index=True)
    page = models.CharField(
        _("page"), max_length=200, blank=True, help_text=_("Article slug the chat started on.")
    )
    # Numbers turns as they start (not as they are saved), so two turns never share an index.
    turns_started = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    # When its reader deleted it from the panel: gone for their session (it cannot be read,
    # continued or voted on again), kept for the admins' review of every conversation.
    hidden_at = models.DateTimeField(_("deleted by the reader"), null=True, blank=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")

    def __str__(self) -> str:
        return str(_("Conversation %(id)s") % {"id": str(self.id)[:8]})


class Turn(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        MAX_STEPS = "max_steps", _("Hit the step limit")
        ERROR = "error", _("Error")
        CANCELLED = "cancelled", _("Cancelled")
        INTERRUPTED = "interrupted", _("Interrupted")

    class Vote(models.TextChoices):
        UP = "up", _("Thumbs up")
        DOWN = "down", _("Thumbs down")

    # Generated when the turn starts, so a retried or replayed save can never double it.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="turns", verbose_name=_("conversation")
    )
    index = models.PositiveIntegerField(
        _("turn"), help_text=_("1 for the first question of the conversation.")
    )
    user_message = models.TextField(_("question"))
    answer = models.TextField(_("answer"), blank=True)
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, db_index=True)
    step_count = models.PositiveSmallIntegerField(
        _("steps"), default=0, help_text=_("Model calls in this turn.")
    )
    model = models.CharField(_("model"), max_length=100, blank=True, db_index=True)
    offline = models.BooleanField(_("offline model"), default=False)
    input_tokens = models.PositiveIntegerField(_("input tokens"), default=0)
    output_tokens = models.PositiveIntegerField(_("output tokens"), default=0)
    # Of those, the tokens charged on an estimate: the endpoint reported no usage for a call (a
    # Stop, a cut stream), so the budget's rule stood in (agent.loop._written_charge).
    estimated_tokens = models.PositiveIntegerField(_("estimated tokens"), default=0)
    time_to_first_token_ms = models.FloatField(_("first token (ms)"), null=True, blank=True)
    duration_ms = models.FloatField(_("duration (ms)"), default=0)
    error_code = models.CharField(_("error code"), max_length=20, blank=True)
    error = models.TextField(_("error"), blank=True)
    citations = models.JSONField(_("citations"), default=list, blank=True)
    # The articles a step-limit ending listed for the visitor (agent.events.LISTS_ARTICLES):
    # not citations (nothing answered), but what the panel showed, so a reload shows it too.
    listed_articles = models.JSONField(_("articles listed"), default=list, blank=True)
    # At least one valid citation and no decline (agent.answered). Finished turns that are not
    # answered are the editors' "write this next" list.
    answered = models.BooleanField(_("answered"), default=False, db_index=True)
    # The visitor only greeted or thanked (agent.small_talk): neither answered nor missed, so
    # the turn stays out of the unanswered backlog and count whatever the answer cited.
    small_talk = models.BooleanField(
        _("small talk"),
        default=False,
        help_text=_(
            "The visitor only greeted, thanked or said goodbye; not counted as unanswered."
        ),
    )
    # Asked while some published article was not searchable yet (the first indexing, an edit,
    # a model switch): an unanswered question may then be the index's fault, not the blog's.
    index_incomplete = models.BooleanField(
        _("asked while indexing"),
        default=False,
        help_text=_("Some published article was not indexed when this was asked."),
    )
    vote = models.CharField(
        _("vote"),
        max_length=4,
        choices=Vote.choices,
        blank=True,
        db_index=True,
        help_text=_("Visitor feedback."),
    )
    feedback_comment = models.TextField(_("feedback comment"), blank=True)
    feedback_at = models.DateTimeField(_("feedback at"), null=True, blank=True)
    page = models.CharField(_("page"), max_length=200, blank=True)
    started_at = models.DateTimeField(_("started at"), db_index=True)
    # The turn's OpenTelemetry trace id (32 hex digits), when traces were exported.
    trace_id = models.CharField(_("trace"), max_length=32, blank=True)
    # The root span's id: a killed worker never exports its root span, and the recovery's span
    # names it as its parent, so its trace hangs together under the one missing span.
    root_span_id = models.CharField(max_length=16, blank=True, default="", db_default="")
    # The process running the turn (see WorkerLease) and when its text was last written.
    worker = models.CharField(max_length=100, blank=True)
    checkpointed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["conversation", "index", "started_at"]
        indexes = [models.Index(fields=["conversation", "index"], name="agent_turn_conv_index")]
        verbose_name = _("turn")
        verbose_name_plural = _("turns")

    def __str__(self) -> str:
        return str(
            _("Turn %(n)s (%(status)s)") % {"n": self.index, "status": self.get_status_display()}
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ToolCall(models.Model):
    """One audited tool call. Its outcome is one of OUTCOMES; only "error" is the tool's fault."""

    CANCELLED = CANCELLED_CALL  # `error` of a call cancelled while it ran
    # Refused for its arguments before it ran: an "error" of the model's, not of the tool's.
    BAD_ARGUMENTS = models.Q(error__startswith=INVALID_ARGUMENTS) | models.Q(
        error__startswith=NOT_AN_OBJECT
    )
    OUTCOMES = {
        "ok": models.Q(executed=True, ok=True),
        # The tool's own failures (a timeout, an exception, nothing found): the dashboard's
        # error rate and the "tool error" filters. A model guessing arguments is not one.
        "error": models.Q(executed=True, ok=False) & ~models.Q(error=CANCELLED) & ~BAD_ARGUMENTS,
        "refused": models.Q(executed=True, ok=False) & BAD_ARGUMENTS,
        "cancelled": models.Q(executed=True, ok=False, error=CANCELLED),
        "not_executed": models.Q(executed=False),
    }

    turn = models.ForeignKey(
        Turn, on_delete=models.CASCADE, related_name="tool_calls", verbose_name=_("turn")
    )
    step = models.PositiveSmallIntegerField(_("step"))
    call_id = models.CharField(_("call id"), max_length=100)
    name = models.CharField(_("tool"), max_length=100, db_index=True)
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)
    ok = models.BooleanField(_("OK"), default=True, db_index=True)
    error = models.TextField(_("error"), blank=True)
    executed = models.BooleanField(
        _("executed"), default=True, help_text=_("False when the step limit stopped it.")
    )
    started_at = models.DateTimeField(_("started at"), db_index=True)
    duration_ms = models.FloatField(_("duration (ms)"), default=0)

    class Meta:
        ordering = ["turn", "step", "id"]
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")

    def __str__(self) -> str:
        return f"{self.name} ({self.call_id})"

    @property
    def outcome(self) -> str:
        return call_outcome(ok=self.ok, executed=self.executed, error=self.error)


def call_outcome(*, ok: bool, executed: bool, error: str) -> str:
    """ "ok", "error", "refused" (the model's arguments did not fit the tool), "cancelled"
    (Stop pressed or the visitor left as it ran) or "not_executed" (the step limit or the
    per-step cap stopped it): the Python twin of ToolCall.OUTCOMES."""
    if not executed:
        return "not_executed"
    if ok:
        return "ok"
    if error == ToolCall.CANCELLED:
        return "cancelled"
    return "refused" if error.startswith((INVALID_ARGUMENTS, NOT_AN_OBJECT)) else "error"


class WorkerLease(models.Model):
    """A web process that runs turns, renewed every checkpoint; a stale one has died."""

    name = models.CharField(max_length=100, primary_key=True)
    renewed_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.name
