from datetime import datetime
from typing import Literal
from uuid import UUID

from ninja import Schema
from pydantic import Field, StrictInt


class ChatIn(Schema):
    type: Literal["message", "feedback"] = Field(
        default="message", description='"message" asks; "feedback" votes on an answer.'
    )
    content: str = Field(default="", description="The visitor's question (message).")
    conversation_id: UUID | None = Field(
        default=None, description="Continue this conversation (message), or the voted one."
    )
    page: str | None = Field(default=None, description="Slug of the article on screen.")
    # Strict, as the WebSocket reads it: pydantic took `true`, "1" and 1.0 for turn 1, and the
    # vote landed on an answer the client never named.
    turn: StrictInt | None = Field(default=None, description="The answer's turn number (feedback).")
    vote: str | None = Field(default=None, description='"up", "down" or "none" (feedback).')
    comment: str | None = Field(default=None, description="Optional comment (feedback).")


class FeedbackIn(Schema):
    vote: str = Field(description='"up", "down", or "none" to clear the vote.')
    comment: str = Field(default="", description="Optional, length-capped.")


class FeedbackOut(Schema):
    type: Literal["feedback_saved"]
    turn: int


class ToolCallOut(Schema):
    call_id: str
    name: str
    arguments: dict
    ok: bool
    executed: bool
    duration_ms: float
    summary: str = ""


class CitationOut(Schema):
    article_id: int
    title: str
    url: str
    excerpt: str = ""
    section_url: str = ""
    available: bool = Field(
        default=True, description="False once the article is no longer published."
    )


class TurnOut(Schema):
    turn: int
    user_message: str
    answer: str
    status: str
    error_code: str
    reason: str = Field(
        default="",
        description='"setup" when the model endpoint refused the site\'s settings (a key, a model '
        "name): asking again cannot help, as the live `error` event's reason says.",
    )
    steps: int
    citations: list[CitationOut]
    articles: list[CitationOut] = Field(
        default=[], description="The articles a step-limit ending listed (not citations)."
    )
    tools: list[ToolCallOut]
    answered: bool
    vote: str = Field(description='The visitor\'s vote: "up", "down", or "" for none.')
    comment: str
    started_at: datetime | None = Field(
        default=None, description="When the question was asked (the panel names the day)."
    )


class ConversationOut(Schema):
    conversation_id: UUID
    page: str
    turns: list[TurnOut]


class ErrorOut(Schema):
    detail: str
