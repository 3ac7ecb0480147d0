from uuid import UUID

from ninja import Schema
from pydantic import Field


class ChatIn(Schema):
    type: str = Field(default="message", description='Always "message".')
    content: str = Field(description="The visitor's question.")
    conversation_id: UUID | None = Field(default=None, description="Continue this conversation.")
    page: str | None = Field(default=None, description="Slug of the article on screen.")


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


class TurnOut(Schema):
    turn: int
    user_message: str
    answer: str
    status: str
    error_code: str
    steps: int
    citations: list[CitationOut]
    tools: list[ToolCallOut]


class ConversationOut(Schema):
    conversation_id: UUID
    page: str
    turns: list[TurnOut]


class ErrorOut(Schema):
    detail: str
