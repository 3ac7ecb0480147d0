"""The blog's REST endpoints: search the knowledge base, list and read published articles."""

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema
from ninja.pagination import PageNumberPagination, paginate
from pydantic import Field

from blog import selectors
from blog.schemas import (
    ArticleDetailOut,
    ArticleOut,
    ErrorOut,
    IndexStatusOut,
    SearchHitOut,
    SearchIn,
)
from blog.search import article_search

router = Router(tags=["blog"])

MAX_PAGE = 100_000  # far past any blog's last page; PostgreSQL's OFFSET overflowed at 2**63
# Without a ceiling, `?page_size=1000000` read and serialised every published article at once.
MAX_PAGE_SIZE = 100


class BoundedPages(PageNumberPagination):
    """Page numbers and sizes within reason: past them a 422 like any bad parameter."""

    class Input(Schema):
        page: int = Field(1, ge=1, le=MAX_PAGE)
        page_size: int | None = Field(None, ge=1, le=MAX_PAGE_SIZE)


@router.get(
    "/search",
    response={200: list[SearchHitOut], 503: ErrorOut},
    summary="Search published articles",
    description=(
        "Hybrid (vector + full-text) search: the ranked excerpts the chat assistant sees, with "
        "the evidence behind each (similarity, coverage, known) and the calibrated relevance. "
        "Hits below the relevance bar are left out unless `all` is true."
    ),
)
def search(request: HttpRequest, params: Query[SearchIn]) -> list[dict]:
    bar = 0.0 if params.all else None
    hits = article_search(query=params.q, limit=params.limit, min_relevance=bar)
    return [hit.as_dict() for hit in hits]


@router.get("/articles", response=list[ArticleOut], summary="Published articles, newest first")
@paginate(BoundedPages, page_size=10)
def article_list(request: HttpRequest, tag: str | None = None):
    return selectors.article_list_published(tag_slug=tag)


@router.get(
    "/articles/{slug}",
    response={200: ArticleDetailOut, 404: ErrorOut},
    summary="One published article",
)
def article_detail(request: HttpRequest, slug: str):
    return selectors.article_get_published(slug=slug)


@router.get(
    "/index-status",
    response=IndexStatusOut,
    summary="How many published articles are not searchable yet",
    description="The chat panel asks while its indexing notice shows, so the notice counts "
    "down and goes away without a reload.",
)
def index_status(request: HttpRequest, response: HttpResponse) -> dict:
    response["Cache-Control"] = "no-store"
    unindexed, searchable = selectors.article_index_counts()
    return {"unindexed": unindexed, "searchable": searchable}
