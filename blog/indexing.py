"""Keeping the knowledge base in step with the articles: reindex services and a background queue.

An article's chunks are rebuilt only when its content hash (title, summary, body, model and
chunking settings) changed; inside a rebuild, a chunk whose text is unchanged keeps its embedding.
So reindexing unchanged content reads each article once and embeds nothing. Saves in the
admin never wait: signals enqueue the article after commit on one daemon worker thread.
"""

import hashlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from blog.chunking import embedding_text, lexical_text, markdown_chunk
from blog.embeddings import (
    Embedder,
    embedder_get,
    embedding_dimensions_check,
    embedding_dimensions_forget,
    embedding_dimensions_stored,
)
from blog.models import Article, Chunk
from ops.metrics import indexing_job_count

logger = logging.getLogger(__name__)

# Bump when chunking or the lexical text changes, so the next reindex rebuilds every article.
INDEX_VERSION = "1"
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
    if slug is None and not dry_run:
        # Articles saved just before (e.g. `seed_demo` then `reindex` at start-up) would
        # otherwise be embedded twice, by the queue and by this scan.
        _queue.discard_pending()
    articles = Article.objects.only(*_ARTICLE_FIELDS).order_by("id")
    if slug is not None:
        articles = articles.filter(pk=Article.objects.get(slug=slug).pk)
    summary = ReindexSummary(removed=_stale_chunks_remove(slug=slug, dry_run=dry_run))
    articles = articles.filter(status=Article.Status.PUBLISHED)
    if progress:
        progress(articles.count())
    for article in articles.iterator(chunk_size=500):
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
        digest = hashlib.sha256(f"{embedder.model_name}\n{embed}".encode()).hexdigest()
        rows.append({"draft": draft, "embed": embed, "hash": digest})
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
        Chunk.objects.bulk_create(
            Chunk(
                article=article,
                ordinal=row["draft"].ordinal,
                heading_path=row["draft"].heading_path[:500],
                text=row["draft"].text,
                lexical=lexical_text(row["embed"]),
                embedding=vectors[row["hash"]],
                embedding_model=embedder.model_name,
                content_hash=row["hash"],
            )
            for row in rows
        )
        Article.objects.filter(pk=article.pk).update(index_hash=new_hash, indexed_at=timezone.now())
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


# --- the background queue -----------------------------------------------------------------


class _IndexQueue:
    """One daemon thread reindexing articles one at a time; repeated ids are coalesced."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[int] = queue.Queue()
        self._pending: dict[int, bool] = {}  # article id -> force, for jobs not started yet
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, article_id: int, force: bool = False) -> None:
        if connection.in_atomic_block:
            # Still inside the caller's transaction (tests capturing on_commit callbacks):
            # another connection could not see the data yet, so do the job here.
            _job_run(article_id, force=force)
            return
        with self._lock:
            if article_id in self._pending:
                self._pending[article_id] |= force
                return
            self._pending[article_id] = force
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="docent-index", daemon=True)
                self._thread.start()
            self._jobs.put(article_id)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._jobs.all_tasks_done:
            while self._jobs.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._jobs.all_tasks_done.wait(remaining)
        return True

    def discard_pending(self) -> int:
        """Drop jobs not started yet (a full scan is about to cover them); returns how many."""
        dropped = 0
        with self._lock:
            while True:
                try:
                    self._jobs.get_nowait()
                except queue.Empty:
                    break
                self._jobs.task_done()
                dropped += 1
            self._pending.clear()
        return dropped

    def _work(self) -> None:
        while True:
            article_id = self._jobs.get()
            with self._lock:
                force = self._pending.pop(article_id, False)
            try:
                close_old_connections()
                _job_run(article_id, force=force)
            finally:
                # A long-lived thread must not keep a connection open between jobs.
                connection.close()
                self._jobs.task_done()


def _job_run(article_id: int, *, force: bool) -> None:
    """Reindex one article; failures are logged, never raised (the request is long gone)."""
    try:
        article = Article.objects.only(*_ARTICLE_FIELDS).filter(pk=article_id).first()
        if article is not None:  # a deleted article's chunks went with it (cascade)
            chunk_reindex(article=article, force=force)
    except Exception:
        logger.exception("reindexing article %s failed", article_id)
        indexing_job_count(ok=False)
    else:
        indexing_job_count(ok=True)


_queue = _IndexQueue()


def article_index_enqueue(*, article_id: int, force: bool = False) -> None:
    """Reindex this article in the background once the current transaction commits."""
    transaction.on_commit(lambda: _queue.put(article_id, force), robust=True)


def articles_index_enqueue(*, article_ids: Iterable[int], force: bool = False) -> int:
    """Queue several articles (after commit); returns how many."""
    ids = list(article_ids)
    for article_id in ids:
        article_index_enqueue(article_id=article_id, force=force)
    return len(ids)


def index_queue_discard() -> int:
    """Drop the background jobs not started yet; returns how many (the running one finishes)."""
    return _queue.discard_pending()


def index_queue_wait(timeout: float = 10) -> bool:
    """Block until the background queue is idle; False if `timeout` seconds passed first."""
    return _queue.wait(timeout)
