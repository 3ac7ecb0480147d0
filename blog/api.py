"""The blog's REST endpoints: search the knowledge base, list and read published articles."""

from django.http import HttpRequest
from ninja import Query, Router
from ninja.pagination import PageNumberPagination, paginate

from blog import selectors
from blog.schemas import ArticleDetailOut, ArticleOut, ErrorOut, SearchHitOut, SearchIn
from blog.search import article_search

router = Router(tags=["blog"])


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
@paginate(PageNumberPagination, page_size=10)
def article_list(request: HttpRequest, tag: str | None = None):
    return selectors.article_list_published(tag_slug=tag)


@router.get(
    "/articles/{slug}",
    response={200: ArticleDetailOut, 404: ErrorOut},
    summary="One published article",
)
def article_detail(request: HttpRequest, slug: str):
    return selectors.article_get_published(slug=slug)
