"""Chat models behind one Protocol: an OpenAI-compatible adapter and the offline model."""

from agent.llm.base import ChatModel, ModelTurn, TextDelta, ToolCall, Usage
from agent.llm.offline import OfflineModel
from agent.llm.openai_compat import OpenAICompatModel

__all__ = [
    "ChatModel",
    "ModelTurn",
    "OfflineModel",
    "OpenAICompatModel",
    "TextDelta",
    "ToolCall",
    "Usage",
]
