"""Reads for the blog. Visibility rules live here, so no page can forget them."""

import datetime as dt
import difflib
import hashlib
import logging
from collections.abc import Iterable

from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)
from django.http import Http404
from procrastinate.contrib.django.models import ProcrastinateJob

from blog.models import Article, Chunk, Tag, published_q
from blog.reading import reading_minutes
from blog.rendering import RENDERER, markdown_to_html

logger = logging.getLogger(__name__)


def article_list_published(
    *, tag: Tag | None = None, tag_slug: str | None = None
) -> QuerySet[Article]:
    """Published articles, newest first, with their tags prefetched; without their bodies,
    which no list shows (a page of 10 long articles read every body to draw 10 cards)."""
    articles = (
        Article.objects.published()
        .defer("body", "index_hash")
        .prefetch_related(Prefetch("tags", queryset=Tag.objects.order_by("name")))
    )
    if tag is not None:
        articles = articles.filter(tags=tag)
    if tag_slug is not None:
        articles = articles.filter(tags__slug=tag_slug)
    return articles.order_by("-published_at", "-id")


def article_cards_by_id(*, ids: Iterable[int]) -> dict[int, Article]:
    """Published articles by id, as cards show them (tags, no body): the search page's hits."""
    articles = (
        Article.objects.published()
        .filter(pk__in=list(ids))
        .defer("body", "index_hash")
        .prefetch_related(Prefetch("tags", queryset=Tag.objects.order_by("name")))
    )
    return {article.pk: article for article in articles}


FEED_LENGTH = 20


def article_list_feed() -> list[Article]:
    """The newest published articles for the Atom feed, without their bodies."""
    articles = Article.objects.published().defer("body", "index_hash")
    return list(articles.order_by("-published_at", "-id")[:FEED_LENGTH])


def article_feed_version() -> str:
    """What the feed shows, fingerprinted: a withdrawn, edited or newly public article changes it
    (the newest date alone would not: a withdrawn article leaves it as it was)."""
    rows = (
        Article.objects.published()
        .order_by("-published_at", "-id")
        .values_list("id", "updated_at", "published_at")[:FEED_LENGTH]
    )
    return hashlib.sha256(repr(list(rows)).encode()).hexdigest()[:32]


def article_get_published(*, slug: str) -> Article:
    """A published article by slug, with its tags.

    Raises:
        Article.DoesNotExist: no such article, or it is a draft or scheduled for later.
    """
    articles = Article.objects.published().prefetch_related(
        Prefetch("tags", queryset=Tag.objects.order_by("name"))
    )
    return articles.get(slug=slug)


def article_body_html(*, article: Article) -> str:
    """The article's body as safe HTML, rendered once per body and renderer for all workers.

    The cache key is a digest of the body itself and of the renderer (blog.rendering.RENDERER),
    not the article's id and `updated_at`: an edit from anywhere (the admin, another worker, a
    queryset update that leaves `updated_at` alone) is a new key on the very next view, and so
    is a change to the renderer. The cache is Redis in a cluster, each process's memory
    otherwise; when it fails, the body is rendered as before and the page is served.
    """
    body = article.body.encode()
    key = f"blog:body-html:{RENDERER}:{hashlib.sha256(body).hexdigest()}"
    # No traceback in the log lines: during an outage every view would write one.
    try:
        html = cache.get(key)
    except Exception as exc:  # noqa: BLE001 - a cache outage must not take the article pages down
        logger.warning("the rendered-body cache could not be read: %r", exc)
        return markdown_to_html(article.body)  # and no write, which would wait as long again
    if html is None:
        html = markdown_to_html(article.body)
        try:
            cache.set(key, html, timeout=settings.BLOG_BODY_HTML_SECONDS)
        except Exception as exc:  # noqa: BLE001
            logger.warning("the rendered-body cache could not be written: %r", exc)
    return html


def article_urls_published(*, ids: set[int]) -> dict[int, str]:
    """Of these article ids, the published ones, each with its address now."""
    articles = Article.objects.published().filter(pk__in=ids).only("slug")
    return {article.pk: article.get_absolute_url() for article in articles}


def article_list_for_admin(*, articles: QuerySet[Article]) -> QuerySet[Article]:
    """The admin changelist's rows: chunk counts and index staleness annotated, bodies left in
    the database."""
    stale = ExpressionWrapper(_unindexed_q(), output_field=BooleanField())
    return articles.annotate(chunk_count=Count("chunks"), index_stale=stale).defer("body")


def article_index_state(*, article: Article, detail: bool = False) -> str:
    """Where an article of article_list_for_admin stands in the search index: "draft",
    "pending" (published, never indexed), "outdated" or "up_to_date"; with `detail` (one
    article's page, not a list) also "failed", when its last indexing job gave up."""
    if article.status != Article.Status.PUBLISHED:
        return "draft"
    if article.indexed_at is None or article.index_stale:
        if detail and _index_job_failed(article_id=article.pk):
            return "failed"
        return "pending" if article.indexed_at is None else "outdated"
    # The gauges' and the panel's rule: an edit since, or vectors from another model.
    return "up_to_date"


def _index_job_failed(*, article_id: int) -> bool:
    """Whether the article's newest indexing job failed (after all its retries)."""
    newest = (
        ProcrastinateJob.objects.filter(task_name="blog.article_index", args__article_id=article_id)
        .order_by("-id")
        .values_list("status", flat=True)
        .first()
    )
    return newest == "failed"


def article_titled(*, title: str, exclude_pk: int | None = None) -> list[str]:
    """The slugs of the other articles with this title (case and spacing aside)."""
    others = Article.objects.filter(title__iexact=" ".join(title.split()))
    return list(others.exclude(pk=exclude_pk).order_by("pk").values_list("slug", flat=True)[:50])


def article_slug_holder(*, slug: str, exclude_pk: int | None = None) -> str | None:
    """The title of the other article at this slug, or None when the slug is free."""
    other = Article.objects.filter(slug=slug).exclude(pk=exclude_pk).values_list("title")
    return next((title for (title,) in other[:1]), None)


def article_preview_build(
    *,
    title: str,
    summary: str,
    body: str,
    status: str,
    published_at: dt.datetime | None,
    tags: Iterable[Tag],
) -> tuple[Article, list[Tag]]:
    """An unsaved article as the admin's form holds it, and its tags, to render as its page.

    Returns:
        The article (never saved: it has no id) and its tags by name, as the page lists them.
    """
    article = Article(
        title=title, summary=summary, body=body, status=status, published_at=published_at
    )
    article.publication_date_settle()  # the date a save would give it
    article.reading_minutes = reading_minutes(body)  # and its reading time ("1 min" unsaved)
    return article, sorted(tags, key=lambda tag: tag.name)


def article_get_visible(*, slug: str, user: User | AnonymousUser) -> Article:
    """The article a user may read: staff can preview drafts, everyone else sees published ones.

    Raises:
        Http404: no such article, or not visible to this user.
    """
    articles = Article.objects.all() if user.is_staff else Article.objects.published()
    try:
        return articles.prefetch_related("tags").get(slug=slug)
    except Article.DoesNotExist as exc:
        raise Http404("No article here.") from exc


# How alike a mistyped address and an article's must be (difflib's ratio) to suggest it: one
# wrong, missing or swapped letter in a 20-letter slug is 0.9-0.95; "pgvector" for
# "pgvector-and-hnsw" is 0.64, too far to be the same link.
SLUG_CLOSE_RATIO = 0.8
# A 404 compares the address with this many of the newest articles' at most, and only an address
# a slug could be: at 10,000 articles each 404 cost 23 ms of matching, a cost anyone could ask
# for as often as they liked.
SLUG_CANDIDATES = 2000
SLUG_LONGEST = 120


def article_neighbours(*, article: Article) -> tuple[Article | None, Article | None]:
    """The published articles just older and just newer than this one, for the links under it.

    A reader who came from a search engine straight to one article met only "All articles"
    at its end. A draft previewed by staff has no place in the list, so no neighbours.
    """
    if not article.is_public:
        return None, None
    published = Article.objects.published().only(
        "title", "slug", "summary", "published_at", "reading_minutes"
    )
    older = published.filter(
        Q(published_at__lt=article.published_at)
        | Q(published_at=article.published_at, id__lt=article.id)
    ).order_by("-published_at", "-id")
    newer = published.filter(
        Q(published_at__gt=article.published_at)
        | Q(published_at=article.published_at, id__gt=article.id)
    ).order_by("published_at", "id")
    return older.first(), newer.first()


def article_translations(*, article: Article) -> list[Article]:
    """The published articles that translate this one, or that it translates (and their other
    translations), for the links under its title: oldest first."""
    root = article.translation_of_id or article.pk
    if root is None:  # a preview of an unsaved article
        return []
    family = Q(pk=root) | Q(translation_of_id=root)
    return list(
        Article.objects.published()
        .filter(family)
        .exclude(pk=article.pk)
        .only("title", "slug", "summary", "published_at")
        .order_by("published_at", "id")
    )


def article_nearest_to_slug(*, slug: str) -> Article | None:
    """The published article whose address is closest to a mistyped one ("…-with-rfr"), if
    one is close: a reader who typed or trimmed a link was told only that there was no page.

    Published articles only, so a 404 names nothing a visitor could not already find.
    """
    typed = slug.lower()
    if len(typed) > SLUG_LONGEST:
        return None
    newest = Article.objects.published().order_by("-published_at", "-id")
    slugs = list(newest.values_list("slug", flat=True)[:SLUG_CANDIDATES])
    close = difflib.get_close_matches(typed, slugs, n=1, cutoff=SLUG_CLOSE_RATIO)
    # A link cut short ("hybrid-search" for "hybrid-search-with-rrf") is the only one it begins.
    started = [candidate for candidate in slugs if candidate.startswith(f"{typed}-")]
    found = close[0] if close else started[0] if len(started) == 1 else None
    if found is None:
        return None
    return Article.objects.published().only("title", "slug").filter(slug=found).first()


def article_last_saved_by(*, article: Article) -> str:
    """The name of who last saved this article in the admin ("" if nobody did there)."""
    entry = (
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Article),
            object_id=str(article.pk),
            action_flag__in=[ADDITION, CHANGE],
        )
        .select_related("user")
        .order_by("-action_time", "-id")
        .first()
    )
    return entry.user.get_username() if entry else ""


def article_get_by_former_slug(*, slug: str, user: User | AnonymousUser) -> Article | None:
    """The article that had this address before its slug was edited, if this user may read it.

    One query, whatever the address: read in two (the row, then the article if visible), the
    former address of a draft took a query more to answer 404 than an unknown one, and the
    time told a guessed draft address (renamed since) from a free one.
    """
    articles = Article.objects.all() if user.is_staff else Article.objects.published()
    return articles.filter(former_slugs__slug=slug).first()


def tag_get_with_articles(*, slug: str) -> Tag:
    """A tag that has at least one published article.

    Raises:
        Http404: unknown tag, or only drafts carry it.
    """
    published = Article.objects.published()
    tag = Tag.objects.filter(slug=slug, articles__in=published).distinct().first()
    if tag is None:
        raise Http404("No such tag.")
    return tag


def tag_list_in_use() -> QuerySet[Tag]:
    """Tags with their published-article counts, most used first."""
    published = published_q("articles__")
    return (
        Tag.objects.annotate(article_count=Count("articles", filter=published, distinct=True))
        .filter(article_count__gt=0)
        .order_by("-article_count", "name")
    )


def tag_is_public(*, tag: Tag) -> bool:
    """True when the tag's page exists: a published article carries it."""
    return Article.objects.published().filter(tags=tag).exists()


def tag_list_for_admin(*, queryset: QuerySet[Tag]) -> QuerySet[Tag]:
    """Tags with how many articles carry each, drafts included (the admin's tag list)."""
    return queryset.annotate(article_count=Count("articles", distinct=True))


def article_list_unindexed() -> QuerySet[Article]:
    """Published articles the search cannot serve as they are now.

    Never indexed, edited since, or embedded by another model than the one questions are
    embedded with now (`EMBEDDING_MODEL` changed): those vectors are not comparable, and
    until the reindex reaches them, vector search misses them. The panel's notice and the
    operators' indexing gauges both count these, so they never disagree.
    """
    return Article.objects.published().filter(_unindexed_q())


def article_index_counts() -> tuple[int, int]:
    """(published articles not searchable yet, published articles searchable), in one query:
    the panel's notice says more than a count when none is searchable yet (a first run)."""
    counts = Article.objects.published().aggregate(
        unindexed=Count("pk", filter=_unindexed_q()), total=Count("pk")
    )
    return counts["unindexed"], counts["total"] - counts["unindexed"]


def _unindexed_q() -> Q:
    """The one rule for "not indexed as it is now" (see `article_list_unindexed`)."""
    foreign = Chunk.objects.filter(article=OuterRef("pk")).exclude(
        embedding_model=settings.EMBEDDING_MODEL
    )
    return (
        Q(indexed_at__isnull=True)
        | Q(index_hash="")
        | Q(indexed_at__lt=F("updated_at"))
        | Q(Exists(foreign))
    )


def article_index_incomplete() -> bool:
    """Whether any published article is not searchable as it is now (`article_list_unindexed`)."""
    return article_list_unindexed().exists()


def article_ever_created() -> bool:
    """True once this database has held an article, even if every one was deleted since.

    "The blog is empty" alone made the start load the demo articles again after an author
    deleted them all to begin their own blog. The article ids' sequence remembers: it has no
    last value until the first article is created.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass)",
            [Article._meta.db_table],
        )
        return cursor.fetchone()[0] is not None
