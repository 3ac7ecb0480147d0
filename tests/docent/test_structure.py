"""Layering that reviews would otherwise have to remember."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> set[tuple[str, str]]:
    """Every (file, module) imported anywhere under the package, including inside functions."""
    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found |= {(path.name, alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add((path.name, node.module))
    return found


def test_blog_never_imports_agent():
    offending = {
        (name, module)
        for name, module in imported_modules("blog")
        if module == "agent" or module.startswith("agent.")
    }
    assert offending == set()


def test_serve_is_a_project_command_not_a_blog_one():
    assert (ROOT / "docent/management/commands/serve.py").exists()
    assert not (ROOT / "blog/management/commands/serve.py").exists()
