"""get_article_detail: one published article, with its (capped) Markdown body."""

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from agent.exceptions import ToolNotFound
from agent.tool import Tool
from agent.tools._db import off_loop

# The largest id PostgreSQL's bigint holds (Article's BigAutoField). A larger number used to
# reach the query and fail as an overflow, logged with a traceback as a tool failure; bounded
# here it is a bad argument the model reads and can correct.
MAX_ARTICLE_ID = 2**63 - 1


class DetailInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    article_id: int = Field(
        ge=1,
        le=MAX_ARTICLE_ID,
        description="The article_id from search_knowledge_base or list_articles results.",
    )


def _detail(article_id: int) -> dict:
    from blog.models import Article

    article = Article.objects.published().prefetch_related("tags").filter(pk=article_id).first()
    if article is None:
        raise ToolNotFound(
            f"no published article has article_id {article_id}. "
            "Use an article_id returned by search_knowledge_base or list_articles."
        )
    limit = settings.AGENT_DETAIL_MAX_CHARS
    body = article.body if len(article.body) <= limit else article.body[:limit] + "\n\n[…truncated]"
    detail = {
        "article_id": article.pk,
        "title": article.title,
        "url": article.get_absolute_url(),
        "summary": article.summary,
        "published_at": article.published_at.date().isoformat(),
        "tags": [tag.name for tag in article.tags.all()],
        "body": body,
    }
    # An author may mark an article as another's translation: "is there a Chinese version?"
    # is then answered by the page's own record (the key only when there is one).
    if translations := _translations(article):
        detail["translations"] = translations
    return detail


def _translations(article) -> list[dict]:
    from blog.selectors import article_translations

    return [
        {
            "article_id": other.pk,
            "title": other.title,
            "url": other.get_absolute_url(),
            "summary": other.summary,
        }
        for other in article_translations(article=article)
    ]


async def run(params: DetailInput) -> dict:
    """Read one published article off the event loop."""
    return await off_loop(_detail)(params.article_id)


def summarize(output: dict) -> str:
    return output["title"]


get_article_detail = Tool(
    name="get_article_detail",
    description=(
        "Read one published article in full: title, url, summary, publication date, tags, "
        "the Markdown body (long bodies are truncated) and its translations into other "
        "languages, when it has any. Use it when an excerpt is not enough to "
        "answer, or when the visitor asks about the article they are reading."
    ),
    input_model=DetailInput,
    run=run,
    summarize=summarize,
)
