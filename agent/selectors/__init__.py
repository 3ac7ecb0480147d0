"""Reads (selectors): sync, keyword-only functions the admin, the API and tests call.

One module per concern; everything is re-exported here, so callers import `agent.selectors`.
"""

from agent.selectors.answer_html import turn_answer_html, turn_answers_html
from agent.selectors.changelists import (
    conversation_filter,
    conversation_filter_tag,
    conversation_list_annotate,
    tag_list_annotate_conversations,
    toolcall_filter,
    toolcall_list_annotate,
    turn_filter_answered,
    turn_filter_feedback,
    turn_filter_log_id,
    turn_list_annotate,
    turn_models,
)
from agent.selectors.citations import Citing, article_citing
from agent.selectors.conversations import (
    conversation_get_owned,
    conversation_history,
    conversation_restore,
)
from agent.selectors.dashboard import (
    Dashboard,
    DayStats,
    PercentileCont,
    ToolStats,
    dashboard_metrics,
)
from agent.selectors.model_health import ModelTrouble, model_endpoint, model_trouble
from agent.selectors.transcript import (
    Transcript,
    TranscriptCall,
    TranscriptStep,
    TranscriptTurn,
    conversation_export,
    conversation_transcript,
    json_text,
)
from agent.selectors.unanswered import (
    UnansweredGroup,
    turn_downvoted,
    turn_downvoted_count,
    turn_unanswered,
    turn_unanswered_count,
    turn_unanswered_groups,
)

__all__ = [
    "Citing",
    "article_citing",
    "ModelTrouble",
    "model_endpoint",
    "model_trouble",
    "Dashboard",
    "DayStats",
    "PercentileCont",
    "ToolStats",
    "Transcript",
    "TranscriptCall",
    "TranscriptStep",
    "TranscriptTurn",
    "UnansweredGroup",
    "conversation_export",
    "conversation_filter",
    "conversation_filter_tag",
    "conversation_get_owned",
    "conversation_history",
    "conversation_list_annotate",
    "conversation_restore",
    "conversation_transcript",
    "dashboard_metrics",
    "json_text",
    "tag_list_annotate_conversations",
    "toolcall_filter",
    "toolcall_list_annotate",
    "turn_answer_html",
    "turn_answers_html",
    "turn_downvoted",
    "turn_downvoted_count",
    "turn_filter_answered",
    "turn_filter_feedback",
    "turn_filter_log_id",
    "turn_list_annotate",
    "turn_models",
    "turn_unanswered",
    "turn_unanswered_count",
    "turn_unanswered_groups",
]
