"""search_knowledge_base: ranked excerpts from the published articles."""

from pydantic import BaseModel, ConfigDict, Field

from agent.tools._db import off_loop
from agent.tools.base import Tool
from ops.tracing import db_spans

NO_RESULTS = "No relevant content found."


class SearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=500,
        description="What to look for, in the visitor's words or as key terms. Any language.",
    )
    limit: int = Field(default=5, ge=1, le=10, description="How many excerpts to return (1-10).")


def _search(query: str, limit: int) -> list[dict] | str:
    from blog.search import article_search

    with db_spans():  # the search's queries as trace spans, when tracing is on
        hits = article_search(query=query, limit=limit)
    return [hit.as_dict() for hit in hits] or NO_RESULTS


async def run(params: SearchInput) -> list[dict] | str:
    """Hybrid (vector + full-text) search over published articles, off the event loop."""
    return await off_loop(_search)(params.query, params.limit)


def summarize(output: list[dict] | str) -> str:
    if isinstance(output, str):
        return "no results"
    return "1 result" if len(output) == 1 else f"{len(output)} results"


search_knowledge_base = Tool(
    name="search_knowledge_base",
    description=(
        "Search the blog's published articles and return the most relevant excerpts, best "
        "first, each with its article_id, title and url. Use it first for any question about "
        "what the blog says; search again with other words if the excerpts miss the point. "
        f'Returns "{NO_RESULTS}" when nothing matches.'
    ),
    input_model=SearchInput,
    run=run,
    summarize=summarize,
)
