"""The tool names the offline model plans with, written once (agent/tools names the tools)."""

SEARCH = "search_knowledge_base"
DETAIL = "get_article_detail"
LIST = "list_articles"
