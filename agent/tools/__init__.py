"""The assistant's tools, listed explicitly: read-only, published articles only."""

from agent.tool import Tool
from agent.tools.get_article_detail import get_article_detail
from agent.tools.list_articles import list_articles
from agent.tools.search_knowledge_base import search_knowledge_base

TOOLS: tuple[Tool, ...] = (search_knowledge_base, get_article_detail, list_articles)

__all__ = [
    "TOOLS",
    "Tool",
    "get_article_detail",
    "list_articles",
    "search_knowledge_base",
]
