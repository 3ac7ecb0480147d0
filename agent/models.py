"""Conversations as the admins review them: every turn, every tool call, how it ended."""

import uuid

from django.db import models

from agent.loop import CANCELLED_CALL


class Conversation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Conversations belong to the visitor's session; another session's id is refused.
    session_key = models.CharField(max_length=64, db_index=True)
    page = models.CharField(
        max_length=200, blank=True, help_text="Article slug the chat started on."
    )
    # Numbers turns as they start (not as they are saved), so two turns never share an index.
    turns_started = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Conversation {str(self.id)[:8]}"


class Turn(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        MAX_STEPS = "max_steps", "Hit the step limit"
        ERROR = "error", "Error"
        CANCELLED = "cancelled", "Cancelled"
        INTERRUPTED = "interrupted", "Interrupted"

    class Vote(models.TextChoices):
        UP = "up", "Thumbs up"
        DOWN = "down", "Thumbs down"

    # Generated when the turn starts, so a retried or replayed save can never double it.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField(help_text="1 for the first question of the conversation.")
    user_message = models.TextField()
    answer = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, db_index=True)
    step_count = models.PositiveSmallIntegerField(default=0, help_text="Model calls in this turn.")
    model = models.CharField(max_length=100, blank=True, db_index=True)
    offline = models.BooleanField(default=False)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    time_to_first_token_ms = models.FloatField(null=True, blank=True)
    duration_ms = models.FloatField(default=0)
    error_code = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    citations = models.JSONField(default=list, blank=True)
    # At least one valid citation and no decline (agent.answered). Finished turns that are not
    # answered are the editors' "write this next" list.
    answered = models.BooleanField(default=False, db_index=True)
    # Asked while some published article was not searchable yet (the first indexing, an edit,
    # a model switch): an unanswered question may then be the index's fault, not the blog's.
    index_incomplete = models.BooleanField(
        default=False, help_text="Some published article was not indexed when this was asked."
    )
    vote = models.CharField(
        max_length=4, choices=Vote.choices, blank=True, db_index=True, help_text="Visitor feedback."
    )
    feedback_comment = models.TextField(blank=True)
    feedback_at = models.DateTimeField(null=True, blank=True)
    page = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(db_index=True)
    # The turn's OpenTelemetry trace id (32 hex digits), when traces were exported.
    trace_id = models.CharField(max_length=32, blank=True)
    # The process running the turn (see WorkerLease) and when its text was last written.
    worker = models.CharField(max_length=100, blank=True)
    checkpointed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["conversation", "index", "started_at"]
        indexes = [models.Index(fields=["conversation", "index"], name="agent_turn_conv_index")]

    def __str__(self) -> str:
        return f"Turn {self.index} ({self.status})"

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ToolCall(models.Model):
    """One audited tool call. Its outcome is one of OUTCOMES; only "error" is the tool's fault."""

    CANCELLED = CANCELLED_CALL  # `error` of a call cancelled while it ran
    OUTCOMES = {
        "ok": models.Q(executed=True, ok=True),
        "error": models.Q(executed=True, ok=False) & ~models.Q(error=CANCELLED),
        "cancelled": models.Q(executed=True, ok=False, error=CANCELLED),
        "not_executed": models.Q(executed=False),
    }

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="tool_calls")
    step = models.PositiveSmallIntegerField()
    call_id = models.CharField(max_length=100)
    name = models.CharField(max_length=100, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    ok = models.BooleanField(default=True, db_index=True)
    error = models.TextField(blank=True)
    executed = models.BooleanField(default=True, help_text="False when the step limit stopped it.")
    started_at = models.DateTimeField(db_index=True)
    duration_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["turn", "step", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.call_id})"

    @property
    def outcome(self) -> str:
        return call_outcome(ok=self.ok, executed=self.executed, error=self.error)


def call_outcome(*, ok: bool, executed: bool, error: str) -> str:
    """ "ok", "error", "cancelled" (Stop pressed or the visitor left as it ran) or
    "not_executed" (the step limit or the per-step cap stopped it): the Python twin of
    ToolCall.OUTCOMES."""
    if not executed:
        return "not_executed"
    if ok:
        return "ok"
    return "cancelled" if error == ToolCall.CANCELLED else "error"


class WorkerLease(models.Model):
    """A web process that runs turns, renewed every checkpoint; a stale one has died."""

    name = models.CharField(max_length=100, primary_key=True)
    renewed_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.name
