"""API shapes for the blog: articles and search hits (Pydantic, via django-ninja)."""

import datetime as dt

from ninja import Schema
from pydantic import Field

from blog.models import Article
from blog.search_page import QUERY_MAX_LENGTH


class SearchIn(Schema):
    q: str = Field(
        min_length=1, max_length=QUERY_MAX_LENGTH, description="The question or key terms."
    )
    limit: int = Field(default=5, ge=1, le=20, description="How many articles to return.")
    all: bool = Field(default=False, description="Also return hits below the relevance bar.")


class SearchHitOut(Schema):
    rank: int = Field(description="1 is the best match.")
    article_id: int
    title: str
    url: str
    excerpt: str = Field(description="The best-matching passage, at most 600 characters.")
    heading: str = Field(description="The excerpt's heading path in the article.")
    language: str = Field(description="The article's language: en or zh.")
    relevance: float = Field(description="Calibrated 0-1; the bar is SEARCH_MIN_RELEVANCE.")
    similarity: float = Field(description="Cosine similarity of the best chunk to the query.")
    coverage: float = Field(description="IDF-weighted share of the query's terms matched.")
    known: float = Field(description="IDF-weighted share of the query's terms the blog uses.")
    margin: float = Field(description="Similarity lead over the next article in its language.")
    score: float = Field(description="Fused rank (RRF) that orders the hits; higher is better.")
    unknown_words: list[str] = Field(
        description="Rare words of the query that no article uses in any form ('tiktoken')."
    )
    read_as: dict[str, str] = Field(
        default_factory=dict,
        description="The query's typos and the words searched for ('pgvecter': 'pgvector').",
    )


class ArticleOut(Schema):
    id: int
    title: str
    slug: str
    url: str
    summary: str
    published_at: dt.datetime
    tags: list[str]
    reading_minutes: int = Field(description="Whole minutes to read the article, at least 1.")

    @staticmethod
    def resolve_url(article: Article) -> str:
        return article.get_absolute_url()

    @staticmethod
    def resolve_tags(article: Article) -> list[str]:
        return [tag.name for tag in article.tags.all()]


class ArticleDetailOut(ArticleOut):
    body: str = Field(description="Markdown.")


class ErrorOut(Schema):
    detail: str


class IndexStatusOut(Schema):
    unindexed: int  # published articles not yet searchable (as the chat panel's notice says)
    searchable: int  # published articles searchable now (0 on a first run: nothing to answer from)
