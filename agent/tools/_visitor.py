"""Whose turn a tool runs in: the runner sets the visitor's address for the turn's task.

The searches a model asks for count on that address's search allowance, as `/api/search` does
(`agent/tools/search_knowledge_base.py`). None outside a visitor's turn (tests, tool calls made
directly): nothing to count on.
"""

from contextvars import ContextVar

visitor_address: ContextVar[str | None] = ContextVar("visitor_address", default=None)
