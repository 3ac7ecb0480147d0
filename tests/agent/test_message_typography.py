"""Messages a visitor reads use the typographic apostrophe, as the panel's own strings do."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where a message becomes an `error` event's or an HTTP error's text.
MESSAGE_CALLS = {"BadRequest", "ModelError", "Refusal", "error", "send_error", "HttpError"}
STRAIGHT = re.compile(r"[A-Za-z]'[A-Za-z]")


def _texts(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def visitor_messages() -> list[tuple[str, str]]:
    """(file:line, text) of each string passed to a message call or returned by
    openai_compat._visitor_message, in the site's Python sources."""
    found = []
    for path in sorted((ROOT / "agent").rglob("*.py")) + sorted((ROOT / "config").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = ""
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in MESSAGE_CALLS:
                for arg in node.args[:1]:
                    found += [(f"{path.name}:{node.lineno}", t) for t in _texts(arg)]
            if isinstance(node, ast.FunctionDef) and node.name == "_visitor_message":
                returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
                found += [(f"{path.name}:{r.lineno}", t) for r in returns for t in _texts(r.value)]
    return found


def test_the_scan_finds_the_messages():
    texts = [text for _, text in visitor_messages()]
    assert "The message is empty. Type a question first." in texts
    assert "The language model timed out. Please try again." in texts


def test_visitor_messages_use_the_typographic_apostrophe():
    # "You have used today's budget." reached the visitor beside the panel's "You’re asking…".
    straight = [(where, text) for where, text in visitor_messages() if STRAIGHT.search(text)]
    assert straight == []
