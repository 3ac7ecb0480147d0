"""The final save of a turn whose row was recorded at its start: one statement, the usual case.

`services.turn_record` handles every case (a retry, a replay from the spool, a row that never
got written); this is its fast path. It was the largest cost of a turn's end in
bench/chat_load.py: seven ORM round trips (lock, conversation, lock again, update, delete the
tool calls, touch the conversation, commit) for what one UPDATE of the running row does.
"""

from __future__ import annotations

from datetime import datetime

import orjson
from django.db import connection, transaction
from django.utils import timezone

from agent.models import ToolCall

# The turn and its conversation's `updated_at` in one statement (atomic by itself). Only a
# `running` row, or one recovery marked `interrupted`, is completed: a second save (a retry,
# a replay) waits for the first one's row lock, then matches nothing, and turn_record's full
# path decides.
_COMPLETE = """
WITH turn AS (
    UPDATE agent_turn SET
        answer = %s, status = %s, step_count = %s, model = %s, offline = %s,
        input_tokens = %s, output_tokens = %s, estimated_tokens = %s,
        time_to_first_token_ms = %s, duration_ms = %s,
        error_code = %s, error = %s, citations = %s::jsonb, listed_articles = %s::jsonb,
        answered = %s, trace_id = %s,
        index_incomplete = %s
    WHERE id = %s::uuid AND conversation_id = %s::uuid AND status IN ('running', 'interrupted')
    RETURNING conversation_id
)
UPDATE agent_conversation SET updated_at = %s FROM turn WHERE agent_conversation.id = turn.conversation_id
RETURNING agent_conversation.id
"""  # noqa: E501


def turn_complete_running(*, record) -> bool:
    """Complete the turn's running row with its record and tool calls; False when there is no
    such row (already completed, or never recorded), and nothing was written.

    `record` is a `services.TurnRecord`.
    """
    params = [
        record.answer, record.status, record.step_count, record.model, record.offline,
        record.input_tokens, record.output_tokens, record.estimated_tokens,
        record.time_to_first_token_ms,
        record.duration_ms, record.error_code, record.error,
        orjson.dumps(record.citations).decode(),
        orjson.dumps(record.listed_articles).decode(), record.answered, record.trace_id,
        record.index_incomplete, record.turn_id, record.conversation_id, timezone.now(),
    ]  # fmt: skip
    if not record.tool_calls:
        return _complete(params)
    with transaction.atomic():
        if not _complete(params):
            return False
        rows = [tool_call_row(record.turn_id, call) for call in record.tool_calls]
        ToolCall.objects.bulk_create(rows)
    return True


def _complete(params: list) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(_COMPLETE, params)
        return cursor.fetchone() is not None


def tool_call_row(turn_id: str, call: dict) -> ToolCall:
    """A ToolCall row from a record's plain `tool_calls` entry."""
    return ToolCall(
        turn_id=turn_id,
        step=call["step"],
        call_id=call["call_id"],
        name=call["name"],
        arguments=call["arguments"],
        result=call["result"],
        ok=call["ok"],
        error=call["error"],
        executed=call["executed"],
        started_at=datetime.fromisoformat(call["started_at"]),
        duration_ms=call["duration_ms"],
    )
