"""search_knowledge_base: ranked excerpts from the published articles."""

from pydantic import BaseModel, ConfigDict, Field

from agent.exceptions import ToolFailure
from agent.ratelimit import search_allow
from agent.tool import Tool
from agent.tools._db import off_loop
from agent.tools._visitor import visitor_address
from ops.metrics import refusal_count, search_observe
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

    # Only hits that clear the relevance bar: below it, neither model can quote anything.
    with db_spans():  # the search's queries as trace spans, when tracing is on
        hits = article_search(query=query, limit=limit)
    # Drift in retrieval shows here first: the share of empty searches rises and the best
    # hit's relevance sinks toward the bar, before the declined share of answers moves.
    search_observe(top_relevance=max((hit.relevance for hit in hits), default=None))
    return [hit.as_tool() for hit in hits] or NO_RESULTS


async def run(params: SearchInput) -> list[dict] | str:
    """Hybrid (vector + full-text) search over published articles, off the event loop.

    Raises:
        ToolFailure: the visitor's address has used its search allowance (the model reads it).
    """
    await _allowance_spend(params.query)
    return await off_loop(_search)(params.query, params.limit)


# How a search the search limit refused begins, as saved (ToolCall.error): the unanswered page
# tells it from a search that failed.
SEARCH_REFUSED = "Error: too many searches"


async def _allowance_spend(query: str) -> None:
    # The model writes the queries: asked to, it ran 32 searches of 500 costly characters in
    # one turn of a one-line message. Each now weighs on the visitor's address as the same
    # query sent to /api/search would, in the same moving window.
    address = visitor_address.get()
    if address is None:
        return
    refusal = await search_allow(client_ip=address, query=query)
    if refusal is not None:
        refusal_count(reason=refusal.reason, address=address)
        raise ToolFailure(
            f"{SEARCH_REFUSED} for this visitor right now (retry in {refusal.retry_after}"
            " s). Answer from the results you have, or say that you could not search.",
            "too many searches",
            reason="rate_limited",
        )


def summarize(output: list[dict] | str) -> str:
    if isinstance(output, str):
        return "no results"
    found = "1 result" if len(output) == 1 else f"{len(output)} results"
    # The panel shows this line: a reader sees which word their typo was searched as.
    read_as = output[0].get("read_as") if output and isinstance(output[0], dict) else None
    if not isinstance(read_as, dict) or not read_as:
        return found
    return found + " for " + ", ".join(f"“{word}”" for word in read_as.values())


search_knowledge_base = Tool(
    name="search_knowledge_base",
    description=(
        "Search the blog's published articles and return the most relevant excerpts, best "
        "first, each with its article_id, title, url, language and a relevance from 0 to 1. "
        "Use it first for any question about what the blog says. A hit may list unknown_words: "
        "words of the query that no article uses; a question that turns on one of them is not "
        "covered, however close the excerpts look. A hit may list read_as: the query's typos "
        "and the blog's words searched for instead. The blog is written in "
        "English and Chinese: when a search finds nothing relevant, search again with the key "
        "terms translated into the other language before concluding. "
        f'Returns "{NO_RESULTS}" when nothing in the blog is relevant enough to quote; then '
        "say the blog does not cover it."
    ),
    input_model=SearchInput,
    run=run,
    summarize=summarize,
)
