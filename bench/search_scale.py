"""Search at scale: 100,000 chunks x 384 dimensions in a throwaway PostgreSQL.

    python bench/search_scale.py [--chunks 100000] [--queries 200] [--quick]

The corpus is synthetic but shaped like a real one: vectors are unit vectors scattered
around 500 random topic centres (so nearest neighbours mean something, as with real
embeddings), and texts are 80 words drawn from a Zipf distribution over 20,000 words, with
English stop words as the most frequent ones. 5% of the 10,000 articles are drafts.
Rows go in with binary COPY; then the HNSW index is built (timed) with the index definition
from blog.models, and the search runs through blog.search exactly as the site calls it.

Reported: HNSW build time; p50/p95 of the hybrid top-10 query (`article_search`, limit 10:
40 candidates from each list, fused) with the query vector precomputed, so embedding the
question is not in the figure; recall@10 of the vector part (HNSW, published-only) against
an exact scan, for a few `hnsw.ef_search` values.

With `BENCH_DATA_DIR=DIR` the database is kept in DIR and the corpus's state beside it
(DIR.corpus.npz): the next run with the same --chunks reuses both instead of loading and
indexing again (minutes at 100k), and draws the same queries.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, machine_note, percentile, table  # noqa: E402

DIMS = 384
ARTICLES = 10_000
TOPICS = 500
WORDS_PER_CHUNK = 80
VOCABULARY = 20_000
STOP_WORDS = (
    "the of and to a in is it that for on with as are this be by or at from an was which "
    "can not but have has its if when they we you more one so than into only also how"
).split()


def vocabulary(rng: np.random.Generator) -> list[str]:
    """Stop words first (most frequent), then pronounceable made-up words."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words: list[str] = list(STOP_WORDS)
    seen = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(syllables, size=rng.integers(2, 5)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_probabilities() -> np.ndarray:
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    return weights / weights.sum()


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def corpus_vectors(rng: np.random.Generator, n: int, centres: np.ndarray) -> np.ndarray:
    topic = rng.integers(0, TOPICS, size=n)
    noise = rng.normal(scale=0.06, size=(n, DIMS)).astype(np.float32)
    return unit_rows(centres[topic] + noise)


def load(n_chunks: int, rng: np.random.Generator) -> tuple[np.ndarray, list[str], float]:
    """Insert articles and chunks with COPY; returns topic centres, vocabulary, seconds."""
    import psycopg
    from django.db import connection
    from pgvector.psycopg import register_vector

    from blog.models import Article

    started = time.perf_counter()
    drafts = set(rng.choice(ARTICLES, size=ARTICLES // 20, replace=False).tolist())
    Article.objects.bulk_create(
        Article(
            title=f"Article {i}",
            slug=f"article-{i}",
            body="(synthetic)",
            status=Article.Status.DRAFT if i in drafts else Article.Status.PUBLISHED,
            published_at=None if i in drafts else "2026-01-01T00:00:00Z",
        )
        for i in range(ARTICLES)
    )
    ids = list(Article.objects.order_by("id").values_list("id", flat=True))
    centres = unit_rows(rng.normal(size=(TOPICS, DIMS)))
    words = vocabulary(rng)
    probabilities = zipf_probabilities()
    settings = connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"],
    ) as raw:
        register_vector(raw)
        with (
            raw.cursor() as cursor,
            cursor.copy(
                "COPY blog_chunk (article_id, ordinal, heading_path, text, lexical, embedding, "
                "embedding_model, content_hash, language) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(
                ["int8", "int4", "varchar", "text", "text", "vector", "varchar", "varchar"]
                + ["varchar"]
            )
            for start in range(0, n_chunks, 10_000):
                size = min(10_000, n_chunks - start)
                vectors = corpus_vectors(rng, size, centres)
                picks = rng.choice(VOCABULARY, size=(size, WORDS_PER_CHUNK), p=probabilities)
                for row in range(size):
                    i = start + row
                    text = " ".join(words[w] for w in picks[row])
                    copy.write_row(
                        [
                            ids[i % ARTICLES],
                            i // ARTICLES,
                            "",
                            text,
                            text,
                            vectors[row],
                            "synthetic",
                            str(i),
                            "zh" if (i % ARTICLES) % 5 == 0 else "en",  # a bilingual blog
                        ]
                    )
    return centres, words, time.perf_counter() - started


def drop_indexes() -> None:
    """Drop the model's HNSW and GIN indexes: bulk loading is faster without them."""
    from django.db import connection

    from blog.models import Chunk

    for index in Chunk._meta.indexes:
        with connection.schema_editor() as editor:
            editor.remove_index(Chunk, index)


def build_indexes() -> dict[str, float]:
    """Recreate the model's HNSW and GIN indexes, exactly as migrated; seconds for each."""
    from django.db import connection

    from blog.models import Chunk

    timings = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")  # 2 cores: leader + 1
    for index in Chunk._meta.indexes:
        started = time.perf_counter()
        with connection.schema_editor() as editor:
            editor.add_index(Chunk, index)
        timings[index.name] = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE blog_chunk")
        # Vacuumed as autovacuum leaves a settled table: the visible articles' count of every
        # search is read from an index alone only on pages marked all-visible.
        cursor.execute("VACUUM ANALYZE blog_article")
    return timings


class FixedEmbedder:
    """Hands the search a precomputed query vector, so only the database work is timed."""

    model_name = "synthetic"
    dimensions = DIMS
    calls = texts = 0
    vector: list[float] = []

    def embed_query(self, text: str) -> list[float]:
        return self.vector

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("not used")


def corpus_database(n_chunks: int, rng: np.random.Generator):
    """Load and index the corpus, or reuse the one kept under BENCH_DATA_DIR.

    Returns the topic centres, the vocabulary, the load's seconds and the index builds'
    (None when reused), with `rng` where a fresh load would have left it.
    """
    kept = os.environ.get("BENCH_DATA_DIR")
    saved = Path(f"{Path(kept).resolve()}.corpus.npz") if kept else None
    if saved is not None and saved.exists():
        with np.load(saved) as state:
            meta = json.loads(str(state["meta"]))
            if meta["chunks"] == n_chunks:
                rng.bit_generator.state = meta["rng"]
                return state["centres"], state["words"].tolist(), None, meta["builds"]
        raise SystemExit(f"{kept} holds {meta['chunks']:,} chunks: use another BENCH_DATA_DIR")
    drop_indexes()
    centres, words, load_seconds = load(n_chunks, rng)
    builds = build_indexes()
    if saved is not None:
        meta = {"chunks": n_chunks, "rng": rng.bit_generator.state, "builds": builds}
        np.savez(saved, centres=centres, words=np.array(words), meta=json.dumps(meta))
    return centres, words, load_seconds, builds


def queries(rng, centres, words, n: int) -> list[tuple[list[float], str]]:
    """Query vectors near topic centres; 4 content words drawn like the corpus' words."""
    vectors = corpus_vectors(rng, n, centres)
    probabilities = zipf_probabilities()[len(STOP_WORDS) :]
    probabilities = probabilities / probabilities.sum()
    picks = rng.choice(np.arange(len(STOP_WORDS), VOCABULARY), size=(n, 4), p=probabilities)
    return [(vectors[i].tolist(), " ".join(words[w] for w in picks[i])) for i in range(n)]


def timed_hybrid(workload, mode: str = "hybrid") -> list[float]:
    """Latency of the whole search as the site calls it, relevance included.

    The bar is off (min_relevance=0): synthetic words mean nothing, so most hits would be cut,
    and every hit's evidence is computed either way.
    """
    latencies, counts = timed_searches(workload, keep=lambda hit: 1, mode=mode)
    assert all(len(hits) == 10 for hits in counts)
    return latencies


def timed_searches(workload, keep=lambda hit: hit.article_id, mode: str = "hybrid"):
    """Each search's latency (bar off, top 10), and `keep` of each of its hits."""
    from blog.search import article_search, article_search_text, article_search_vector

    search = {
        "hybrid": article_search,
        "vector": article_search_vector,
        "text": article_search_text,
    }[mode]
    embedder = FixedEmbedder()
    latencies, hits = [], []
    for vector, text in workload:
        embedder.vector = vector
        started = time.perf_counter()
        found = search(query=text, limit=10, embedder=embedder, min_relevance=0)
        latencies.append(time.perf_counter() - started)
        hits.append([keep(hit) for hit in found])
    return latencies, hits


def timed_part(workload, part: str) -> list[float]:
    from django.db import transaction

    from blog.search_lists import chunk_nearest, chunk_text_candidates

    latencies = []
    for vector, text in workload:
        started = time.perf_counter()
        with transaction.atomic():
            if part == "vector":
                list(chunk_nearest(vector=vector, k=40).values_list("id", flat=True))
            else:
                chunk_text_candidates(query=text, k=40)
        latencies.append(time.perf_counter() - started)
    return latencies


def recall(workload, ef_search: int, k: int = 10) -> tuple[float, float]:
    """Mean recall@k of the HNSW scan against an exact scan, and its mean latency."""
    from django.db import connection, transaction
    from django.test.utils import override_settings

    from blog.search_lists import chunk_nearest

    found, seconds = 0, 0.0
    with override_settings(SEARCH_EF_SEARCH=ef_search):
        for vector, _ in workload:
            with transaction.atomic():
                started = time.perf_counter()
                approximate = set(chunk_nearest(vector=vector, k=k).values_list("id", flat=True))
                seconds += time.perf_counter() - started
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL enable_indexscan = off")  # exact: scan and sort
                exact = set(chunk_nearest(vector=vector, k=k).values_list("id", flat=True))
            found += len(approximate & exact)
    return found / (k * len(workload)), seconds / len(workload)


def plan_uses_hnsw(vector: list[float]) -> bool:
    from django.db import transaction

    from blog.search_lists import chunk_nearest

    with transaction.atomic():
        return "chunk_embedding_hnsw" in chunk_nearest(vector=vector, k=40).explain()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20,000 chunks, 50 queries")
    args, _ = parser.parse_known_args()  # run_all.py passes its own flags to every bench
    if args.quick:
        args.chunks, args.queries = 20_000, 50
    load_start = os.getloadavg()[0]
    django_start()
    from django.conf import settings

    rng = np.random.default_rng(42)
    centres, words, load_seconds, builds = corpus_database(args.chunks, rng)
    workload = queries(rng, centres, words, args.queries)
    timed_hybrid(workload[:20])  # warm the caches and the connection
    hybrid = timed_hybrid(workload)
    vector_only = timed_hybrid(workload, "vector")
    text_only = timed_hybrid(workload, "text")
    vector_part = timed_part(workload, "vector")
    text_part = timed_part(workload, "text")
    recall_rows, configured = [], "n/a"
    for ef in sorted({20, 40, 80, 160, settings.SEARCH_EF_SEARCH}):
        value, mean = recall(workload[:100], ef)
        recall_rows.append([ef, f"{value:.3f}", f"{mean * 1000:.2f}"])
        if ef == settings.SEARCH_EF_SEARCH:
            configured = f"{value:.3f}"

    from django.db import connection

    with connection.cursor() as cursor:
        # The 100k index and table (~400 MB) exceed the default 128 MB: pages come from the OS
        # cache on most queries, which weighs on every figure below (docs/benchmarks.md).
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
    ms = lambda values, p: f"{percentile(values, p) * 1000:.2f}"  # noqa: E731
    print(
        table(
            ["measure", "value", "goal"],
            [
                [f"chunks ({ARTICLES:,} articles, 5% drafts)", f"{args.chunks:,}", ""],
                [
                    "COPY load (articles + chunks, no indexes)",
                    "reused" if load_seconds is None else f"{load_seconds:.1f} s",
                    "",
                ],
                [
                    "HNSW build (m=16, ef_construction=64): all / en / zh",
                    " / ".join(
                        f"{builds[f'chunk_embedding_hnsw{suffix}']:.1f}"
                        for suffix in ("", "_en", "_zh")
                    )
                    + " s",
                    "",
                ],
                ["GIN build (tsvector)", f"{builds['chunk_search_vector_gin']:.1f} s", ""],
                ["hybrid top-10 p50", f"{ms(hybrid, 50)} ms", ""],
                ["hybrid top-10 p95", f"{ms(hybrid, 95)} ms", "<= 10 ms"],
                [
                    "  vector-only search p50 / p95 (same run)",
                    f"{ms(vector_only, 50)} / {ms(vector_only, 95)} ms",
                    "",
                ],
                [
                    "  full-text-only search p50 / p95 (same run)",
                    f"{ms(text_only, 50)} / {ms(text_only, 95)} ms",
                    "",
                ],
                [
                    "  vector part (40 candidates) p50 / p95",
                    f"{ms(vector_part, 50)} / {ms(vector_part, 95)} ms",
                    "",
                ],
                [
                    "  text part (40 candidates) p50 / p95",
                    f"{ms(text_part, 50)} / {ms(text_part, 95)} ms",
                    "",
                ],
                [
                    f"vector recall@10 vs exact scan (ef_search {settings.SEARCH_EF_SEARCH})",
                    configured,
                    ">= 0.95",
                ],
                ["planner uses the HNSW index", str(plan_uses_hnsw(workload[0][0])), "True"],
            ],
        )
    )
    print()
    print(table(["hnsw.ef_search", "recall@10", "vector top-10 mean ms"], recall_rows))
    print(
        f"\n{len(workload)} queries (4 words + a vector near a topic centre), timed after 20 "
        f"warm-up; recall over the first 100. Load average at the start "
        f"{load_start:.1f}, at the end {os.getloadavg()[0]:.1f}; shared_buffers "
        f"{shared_buffers}. {machine_note()}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
