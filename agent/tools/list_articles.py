"""list_articles: the newest published articles, optionally with one tag."""

from pydantic import BaseModel, ConfigDict, Field

from agent.tool import Tool
from agent.tools._db import off_loop


class ListInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tag: str | None = Field(
        default=None, max_length=60, description="Only articles with this tag (name or slug)."
    )
    limit: int = Field(default=10, ge=1, le=20, description="How many articles (1-20).")


def _list(tag: str | None, limit: int) -> list[dict]:
    from django.db.models import Q

    from blog.chunking import language_detect
    from blog.selectors import article_list_published

    articles = article_list_published()
    if tag:
        articles = articles.filter(Q(tags__slug__iexact=tag) | Q(tags__name__iexact=tag)).distinct()
    return [
        {
            "article_id": article.pk,
            "title": article.title,
            "url": article.get_absolute_url(),
            "published_at": article.published_at.date().isoformat(),
            "summary": article.summary,
            "tags": [t.name for t in article.tags.all()],
            # The language it is written in ("en", "zh"), as its chunks are indexed: readers
            # ask for the articles in one language.
            "language": language_detect(f"{article.title} {article.summary}"),
        }
        for article in articles[:limit]
    ]


async def run(params: ListInput) -> list[dict]:
    """List published articles off the event loop."""
    return await off_loop(_list)(params.tag, params.limit)


def summarize(output: list[dict]) -> str:
    return "1 article" if len(output) == 1 else f"{len(output)} articles"


list_articles = Tool(
    name="list_articles",
    description=(
        "List the newest published articles (title, url, date, summary, tags, language), "
        "optionally only those with a tag. Use it for questions like 'what is new' or 'what do "
        "you have about X' when X is a topic tag, and for questions about the collection: "
        "which articles are in a language, the oldest ones, how many there are."
    ),
    input_model=ListInput,
    run=run,
    summarize=summarize,
)
