"""The articles a turn's tools returned, and those its answer cites. Framework-free."""

from __future__ import annotations

import re
from typing import Any


def articles_gather(output: Any, articles: list[dict], passages: dict[Any, dict]) -> None:
    """Collect {article_id, title, url} from a tool output (top-level dict or list of dicts,
    and an article's translations), and from a search hit the passage and its section, which
    the visitor's sources show."""
    for item in output if isinstance(output, list) else [output]:
        if isinstance(item, dict) and {"article_id", "title", "url"} <= item.keys():
            if all(a["article_id"] != item["article_id"] for a in articles):
                articles.append({k: item[k] for k in ("article_id", "title", "url")})
            where = {k: item[k] for k in ("excerpt", "section_url") if item.get(k)}
            if where and item["article_id"] not in passages:
                passages[item["article_id"]] = where
            # An article's record names its translations (get_article_detail): the tools
            # returned them, so an answer may link them ("is there a Chinese version?").
            if isinstance(item.get("translations"), list):
                articles_gather(item["translations"], articles, passages)


def citations_find(answer: str, articles: list[dict]) -> list[dict]:
    """Gathered articles whose url or [#id] appears in the answer, in first-appearance order."""
    found = []
    for article in articles:
        url = article["url"]
        match = re.search(re.escape(url) + r"(?![\w\-])", answer) if url else None
        positions = [match.start()] if match else []
        marker = answer.find(f"[#{article['article_id']}]")
        positions += [marker] if marker >= 0 else []
        if positions:
            found.append((min(positions), article))
    return [dict(article) for _, article in sorted(found, key=lambda pair: pair[0])]
