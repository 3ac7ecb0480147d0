"""Keeping the knowledge base in step with the articles: reindex services and their queued jobs.

An article's chunks are rebuilt only when its content hash (title, summary, body, model and
chunking settings) changed; inside a rebuild, a chunk whose text is unchanged keeps its embedding.
So reindexing unchanged content reads each article once and embeds nothing. Saves in the
admin never wait: the save queues a job (procrastinate, in the save's own transaction) that the
task worker runs with retries.
"""

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from blog.chunking import (
    embedding_text,
    language_detect,
    lexical_text,
    markdown_chunk,
    vector_text,
)
from blog.embeddings import (
    Embedder,
    embedder_get,
    embedding_dimensions_check,
    embedding_dimensions_forget,
    embedding_dimensions_stored,
)
from blog.models import Article, Chunk
from blog.relevance import vocabulary

logger = logging.getLogger(__name__)

# Bump when chunking or the lexical text changes, so the next reindex rebuilds every article.
# 3: link targets left out; 4: table rows spelled out for vectors; 5: not in code blocks
INDEX_VERSION = "5"
_ARTICLE_FIELDS = (
    "id",
    "title",
    "summary",
    "body",
    "status",
    "index_hash",
    "indexed_at",
    "updated_at",
)


# Set when the process shuts down. A scan runs in a worker thread that nothing can interrupt:
# it stops between articles instead (an article's chunks are swapped in one transaction, so none
# is left half indexed), and the next scan (every start queues one) does the rest. Without it,
# Ctrl-C during the first run's indexing kept `make run` alive until the last article.
_stopping = threading.Event()


def indexing_stop() -> None:
    """Ask a running scan to stop after its current article: the process is shutting down."""
    _stopping.set()


def indexing_resume() -> None:
    """Let scans run to the end again (a test that stopped one)."""
    _stopping.clear()


@dataclass(frozen=True)
class ArticleIndexResult:
    """What reindexing one article did (or, in a dry run, would do)."""

    changed: bool = False
    chunks: int = 0
    embedded: int = 0
    removed: bool = False


@dataclass
class ReindexSummary:
    """Totals of a reindex run."""

    scanned: int = 0
    changed: int = 0
    embedded: int = 0
    removed: int = 0
    seconds: float = 0.0


def article_index_hash(*, article: Article, embedder: Embedder) -> str:
    """Hash of everything that shapes an article's chunks and their embeddings."""
    parts = [
        INDEX_VERSION,
        embedder.model_name,
        str(embedder.dimensions),
        str(settings.CHUNK_TARGET_TOKENS),
        str(settings.CHUNK_OVERLAP_TOKENS),
        article.title,
        article.summary,
        article.body,
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def chunk_reindex(
    *,
    article: Article,
    embedder: Embedder | None = None,
    force: bool = False,
    reuse: bool = True,
    batch_size: int | None = None,
    dry_run: bool = False,
) -> ArticleIndexResult:
    """Rebuild one article's chunks if its content changed; drop them if it is not published.

    Args:
        article: with at least the fields in _ARTICLE_FIELDS loaded.
        force: rebuild even when the content hash is unchanged.
        reuse: keep embeddings of chunks whose text did not change (False for `--full`).
        batch_size: texts per embedding call (default EMBEDDING_BATCH_SIZE).
        dry_run: compute what would change, write and embed nothing.

    Returns:
        What changed: chunks written, texts embedded, or chunks removed.

    Raises:
        EmbeddingError: the embedding backend failed; the old chunks are left in place.
    """
    embedder = embedder or embedder_get()
    if article.status != Article.Status.PUBLISHED:
        return _chunks_remove(article=article, dry_run=dry_run)
    new_hash = article_index_hash(article=article, embedder=embedder)
    if new_hash == article.index_hash and not force:
        _index_confirm(article=article, dry_run=dry_run)
        return ArticleIndexResult()
    rows = _chunk_rows(article=article, embedder=embedder)
    known = _embeddings_known(article=article, rows=rows, embedder=embedder) if reuse else {}
    missing = list(dict.fromkeys(row["hash"] for row in rows if row["hash"] not in known))
    if dry_run:
        return ArticleIndexResult(changed=True, chunks=len(rows), embedded=len(missing))
    embedding_dimensions_check(embedder=embedder)  # before paying for any embedding
    texts = {row["hash"]: row["embed"] for row in rows}
    known |= dict(
        zip(missing, _embed(embedder, [texts[h] for h in missing], batch_size), strict=True)
    )
    written = _chunks_replace(
        article=article, rows=rows, vectors=known, new_hash=new_hash, embedder=embedder
    )
    return ArticleIndexResult(
        changed=written, chunks=len(rows) if written else 0, embedded=len(missing)
    )


def articles_reindex(
    *,
    full: bool = False,
    slug: str | None = None,
    batch_size: int | None = None,
    dry_run: bool = False,
    embedder: Embedder | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReindexSummary:
    """Bring the whole index (or one article's) up to date.

    Args:
        full: re-embed everything; also converts the vector column to the configured width.
        slug: only this article.
        batch_size: texts per embedding call (default EMBEDDING_BATCH_SIZE).
        dry_run: report what would change, write nothing.
        progress: called with the number of articles to scan, then with 1 after each.

    Returns:
        Counts of articles scanned, changed and cleaned, texts embedded, and the time taken.

    Raises:
        Article.DoesNotExist: `slug` names no article.
        EmbeddingDimensionMismatch: the stored vectors have another width and `full` is off.
        EmbeddingError: the embedding backend failed (articles done so far stay done).
    """
    started = time.perf_counter()
    embedder = embedder or embedder_get()
    _dimensions_prepare(embedder=embedder, full=full, dry_run=dry_run)
    articles = Article.objects.only(*_ARTICLE_FIELDS).order_by("id")
    if slug is not None:
        articles = articles.filter(pk=Article.objects.get(slug=slug).pk)
    summary = ReindexSummary(removed=_stale_chunks_remove(slug=slug, dry_run=dry_run))
    articles = articles.filter(status=Article.Status.PUBLISHED)
    if progress:
        progress(articles.count())
    for article in articles.iterator(chunk_size=500):
        if _stopping.is_set():
            logger.info("reindex stopped by shutdown after %d articles", summary.scanned)
            break
        result = chunk_reindex(
            article=article,
            embedder=embedder,
            force=full,
            reuse=not full,
            batch_size=batch_size,
            dry_run=dry_run,
        )
        summary.scanned += 1
        summary.changed += result.changed
        summary.embedded += result.embedded
        if progress:
            progress(1)
    summary.seconds = time.perf_counter() - started
    return summary


def _chunk_rows(*, article: Article, embedder: Embedder) -> list[dict]:
    drafts = markdown_chunk(
        body=article.body,
        target=settings.CHUNK_TARGET_TOKENS,
        overlap=settings.CHUNK_OVERLAP_TOKENS,
    )
    rows = []
    for draft in drafts:
        embed = embedding_text(
            title=article.title,
            heading_path=draft.heading_path,
            text=draft.text,
            summary=article.summary,
        )
        vector = vector_text(embed)
        digest = hashlib.sha256(f"{embedder.model_name}\n{vector}".encode()).hexdigest()
        rows.append(
            {"draft": draft, "embed": vector, "lexical": lexical_text(embed), "hash": digest}
        )
    return rows


def _embeddings_known(*, article: Article, rows: list[dict], embedder: Embedder) -> dict:
    """Embeddings this article already has for unchanged chunk texts, by content hash."""
    stored = Chunk.objects.filter(
        article=article,
        embedding_model=embedder.model_name,
        content_hash__in=[row["hash"] for row in rows],
    ).values_list("content_hash", "embedding")
    return dict(stored)


def _embed(embedder: Embedder, texts: list[str], batch_size: int | None) -> list:
    vectors: list = []
    size = max(1, batch_size or settings.EMBEDDING_BATCH_SIZE)
    for start in range(0, len(texts), size):
        vectors += embedder.embed_passages(texts[start : start + size])
    return vectors


def _chunks_replace(
    *, article: Article, rows: list[dict], vectors: dict, new_hash: str, embedder: Embedder
) -> bool:
    """Swap in the new chunks in one transaction, unless the article changed meanwhile."""
    with transaction.atomic():
        locked = (
            Article.objects.select_for_update().only(*_ARTICLE_FIELDS).filter(pk=article.pk).first()
        )
        if (
            locked is None
            or locked.status != Article.Status.PUBLISHED
            or article_index_hash(article=locked, embedder=embedder) != new_hash
        ):
            return False  # deleted, unpublished or edited since: the job its save queued wins
        Chunk.objects.filter(article=article).delete()
        language = language_detect(f"{locked.title}\n{locked.body}")
        Chunk.objects.bulk_create(
            Chunk(
                article=article,
                ordinal=row["draft"].ordinal,
                heading_path=row["draft"].heading_path[:500],
                text=row["draft"].text,
                lexical=row["lexical"],
                embedding=vectors[row["hash"]],
                language=language,
                embedding_model=embedder.model_name,
                content_hash=row["hash"],
            )
            for row in rows
        )
        Article.objects.filter(pk=article.pk).update(index_hash=new_hash, indexed_at=timezone.now())
    vocabulary.invalidate()  # other processes notice the new chunk ids
    return True


def _index_confirm(*, article: Article, dry_run: bool) -> None:
    """A save that changed nothing indexable still leaves the index current: say so."""
    if dry_run or article.indexed_at is None or article.indexed_at >= article.updated_at:
        return
    Article.objects.filter(pk=article.pk).update(indexed_at=timezone.now())


def _chunks_remove(*, article: Article, dry_run: bool) -> ArticleIndexResult:
    chunks = Chunk.objects.filter(article=article)
    if dry_run:
        return ArticleIndexResult(removed=chunks.exists())
    with transaction.atomic():
        deleted, _ = chunks.delete()
        Article.objects.filter(pk=article.pk).exclude(index_hash="").update(
            index_hash="", indexed_at=None
        )
    return ArticleIndexResult(removed=bool(deleted))


def _stale_chunks_remove(*, slug: str | None, dry_run: bool) -> int:
    """Drop chunks of articles that are no longer published; returns how many articles."""
    hidden = Article.objects.exclude(status=Article.Status.PUBLISHED)
    if slug is not None:
        hidden = hidden.filter(slug=slug)
    stale = hidden.filter(chunks__isnull=False).distinct()
    if dry_run:
        return stale.count()
    with transaction.atomic():
        count = stale.count()
        Chunk.objects.filter(article__in=hidden).delete()
        hidden.exclude(index_hash="").update(index_hash="", indexed_at=None)
    return count


def _dimensions_prepare(*, embedder: Embedder, full: bool, dry_run: bool) -> None:
    """Check the vector column's width; with `full`, convert it to the configured one."""
    stored = embedding_dimensions_stored()
    if stored is None or stored == embedder.dimensions:
        return
    if not full:
        embedding_dimensions_check(embedder=embedder)  # raises, telling to use --full
    if dry_run:
        return
    # Old vectors cannot be cast to the new width: empty the index, then retype the column
    # (PostgreSQL rebuilds the HNSW index with it). Every article is re-embedded after this.
    with transaction.atomic():
        Chunk.objects.all().delete()
        Article.objects.update(index_hash="", indexed_at=None)
        with connection.cursor() as cursor:
            width = int(embedder.dimensions)  # an int, so safe to put in DDL
            cursor.execute(f"ALTER TABLE blog_chunk ALTER COLUMN embedding TYPE vector({width})")
    embedding_dimensions_forget()
    logger.warning(
        "embedding column converted from %s to %s dimensions", stored, embedder.dimensions
    )


# --- background jobs (procrastinate, see blog/tasks.py) -------------------------------------

FIRST_RUN_PRIORITY = -1  # after an author's save (0), before the periodic reconcile (-10)
_saves_queue = ContextVar("article_saves_queue", default=True)


@contextmanager
def article_saves_unqueued() -> Iterator[None]:
    """Saves inside queue no indexing job of their own: the caller queues them (the first run
    loads the demo articles, then its scan queues them behind any author's save)."""
    token = _saves_queue.set(False)
    try:
        yield
    finally:
        _saves_queue.reset(token)


def article_saves_queued() -> bool:
    """Whether an article's save queues its own indexing job here (blog.signals)."""
    return _saves_queue.get()


def article_index_run(*, article_id: int, force: bool = False) -> ArticleIndexResult | None:
    """Reindex one article by id (the body of the queued job); None if it was deleted.

    Raises:
        EmbeddingError: the embedding backend failed; the queue retries the job.
    """
    article = Article.objects.only(*_ARTICLE_FIELDS).filter(pk=article_id).first()
    if article is None:  # a deleted article's chunks went with it (cascade)
        return None
    return chunk_reindex(article=article, force=force)


def article_index_needed(*, article: Article) -> bool:
    """Whether a save of this article needs a reindex job.

    Always when it is published (its text may have changed). A draft's job only removes what
    is indexed of it, so a draft with no chunks and no index hash needs none: saving a new
    draft, then publishing it, queued two jobs, the first with nothing to do. Read after the
    save's UPDATE, which holds the article's row lock: a job still embedding its published
    version cannot write chunks after this read (_chunks_replace locks the row and refuses a
    draft), so a draft found with nothing indexed stays that way.
    """
    if article.status == Article.Status.PUBLISHED:
        return True
    indexed = Q(chunks__isnull=False) | ~Q(index_hash="")
    return Article.objects.filter(indexed, pk=article.pk).exists()


def article_index_enqueue(*, article_id: int, force: bool = False) -> bool:
    """Queue a reindex of this article inside the current transaction; False if one waits.

    The job row is written by the caller's transaction, so it exists exactly when the save
    does, and a worker (another process) sees it only after commit. A job already waiting
    reads the article when it runs, so it covers this save as well.
    """
    from procrastinate.exceptions import AlreadyEnqueued

    from blog.tasks import article_index

    lock = f"article-index-{article_id}{'-full' if force else ''}"
    try:
        with transaction.atomic():  # a savepoint: a refused duplicate must not abort the save
            article_index.configure(queueing_lock=lock, lock="index").defer(
                article_id=article_id, force=force
            )
    except AlreadyEnqueued:
        return False
    return True


def articles_index_enqueue(*, article_ids: Iterable[int], force: bool = False) -> int:
    """Queue several articles; returns how many."""
    ids = list(article_ids)
    for article_id in ids:
        article_index_enqueue(article_id=article_id, force=force)
    return len(ids)


def articles_first_run_enqueue() -> int:
    """Queue one indexing job per published article, behind any author's save; returns how many.

    As one scan job the demo articles held the "index" lock for 48 s, and an article an author
    saved meanwhile waited for all of them. Jobs sharing a lock run one at a time, the waiting
    one of highest priority first (procrastinate 3.3+), so a save (priority 0) now waits for one
    article at most. Each job carries its place, `[n, total]`, for the first run's count.
    """
    from blog.tasks import article_index

    published = Article.objects.filter(status=Article.Status.PUBLISHED).order_by("id")
    ids = list(published.values_list("id", flat=True))
    queued = article_index.configure(lock="index", priority=FIRST_RUN_PRIORITY)
    with transaction.atomic():
        for n, article_id in enumerate(ids, start=1):
            queued.defer(article_id=article_id, first_run=[n, len(ids)])
    return len(ids)


def reindex_scan_enqueue(*, first_run: bool = False) -> bool:
    """Queue a scan of every article (the release step, the admin); False if one waits."""
    from procrastinate.exceptions import AlreadyEnqueued

    from blog.tasks import reindex_scan

    # A first run's scan has a queueing lock of its own, and goes ahead of a plain scan: one
    # left waiting (a start with no task worker) refused it, silently, and then indexed the
    # demo articles as one job, with no count (CI 87: "reindex scan: 14 scanned, 14 changed"
    # and no "Indexing demo articles, first run only: n/14" in ten minutes).
    queueing_lock, priority = ("reindex-scan-first-run", 11) if first_run else ("reindex-scan", 10)
    try:
        with transaction.atomic():
            # Ahead of the per-article jobs it covers (they then find nothing to do).
            reindex_scan.configure(
                queueing_lock=queueing_lock, lock="index", priority=priority
            ).defer(first_run=first_run)
    except AlreadyEnqueued:
        return False
    return True
