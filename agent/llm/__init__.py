"""Chat models behind one Protocol (`agent.llm.base`).

The adapters live in `agent.llm.offline` and `agent.llm.openai_compat`; they are not imported
here, so importing the loop's vocabulary never pulls in the OpenAI SDK.
"""

from agent.llm.base import ChatModel, ModelTurn, TextDelta, ToolCall, Usage

__all__ = ["ChatModel", "ModelTurn", "TextDelta", "ToolCall", "Usage"]
