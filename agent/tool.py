"""The Tool dataclass: a Pydantic input model, an async run function and a UI summary.

Framework-free, and outside `agent.tools`, so the loop can import it without the tools.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class Tool:
    """A read-only function the model may call."""

    name: str
    description: str
    input_model: type[BaseModel]
    run: Callable[[BaseModel], Awaitable[Any]]
    summarize: Callable[[Any], str]

    def schema(self) -> dict:
        """Return the OpenAI Chat Completions function-tool definition."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters_schema(self.input_model),
            },
        }


@functools.cache
def parameters_schema(model: type[BaseModel]) -> dict:
    """Return the model's JSON Schema without titles, with additionalProperties false.

    Cached (built once per input model, shared by every turn): treat it as read-only.
    """
    return _clean(model.model_json_schema())


def _clean(node: Any) -> Any:
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            # These map names to schemas; a field may be called "title", so keep the names.
            cleaned[key] = {name: _clean(sub) for name, sub in value.items()}
        elif key != "title":
            cleaned[key] = _clean(value)
    if cleaned.get("type") == "object":
        cleaned["additionalProperties"] = False
    return cleaned
