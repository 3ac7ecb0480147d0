"""Binary quantization with re-ranking against the float HNSW walk, at 100k chunks, in one run.

    python bench/search_bq.py [--chunks 100000] [--queries 600] [--block 50]
                              [--candidates 40,80,160] [--ef-extra 0.25] [--quick]
    python bench/search_bq.py --candidates 40 --with bench/answer_quality.py --quick --split tune
    python bench/search_bq.py --e5

It builds the database of bench/search_scale.py (same corpus, same indexes) and adds, for
each article language, the partial HNSW expression index pgvector documents for binary
quantization: `(binary_quantize(embedding)::bit(384)) bit_hamming_ops WHERE language = ...`.
Then the whole hybrid search (`article_search`, limit 10, as the site calls it) runs with
each way of taking the per-language vector lists, in blocks that rotate their order:

- `float`: the site's statement (blog.search_sql): each list walks its language's float
  HNSW graph by cosine distance, `LIMIT k`;
- `bq N`: each list walks its language's bit graph by hamming distance (`<~>`) and fetches
  N candidates, which the same statement re-ranks by their exact cosine distance, keeping
  `k`. `hnsw.ef_search` is N plus `--ef-extra` of it: a walk returns at most ef_search
  rows, and with exactly N the 5% of drafts sent every walk into a second, iterative pass.

Everything downstream (the text half, fusion, evidence, relevance, hits) is unchanged. Reported
per mode: p50/p95 latency, CPU per search (the server's processes and this one, from /proc),
buffer visits per search (pg_stat_database), how many searches return hits identical to the
float path's, evidence included, and the recall of the float path's top-10 articles; from
EXPLAIN ANALYZE on a sample, the vector statement's time and buffers per index scan, the
recall of each float chunk list, and the text statement's time; and where a search's time
goes (waiting on the database, fusion, the rest of the Python).

Last, without any index: how much of each query's cosine top-10 and top-40 the top N by
hamming distance hold, which bounds what any walk of the bit graph can find. `--e5` prints the
same for the demo articles' real multilingual-e5-small vectors and the eval questions.

With `--with SCRIPT ARGS...` it runs another bench (bench/retrieval_quality.py,
bench/answer_quality.py) with the bit indexes added after its migration and every vector list
taken by the bit walk of the first `--candidates` value, to compare its tables with a plain run.

Measured, not kept: docs/benchmarks.md, "Binary quantization with re-ranking".
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import runpy
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_scale  # noqa: E402
from _django import django_start, machine_note, percentile, table  # noqa: E402
from search_buffers import cpu_seconds  # noqa: E402

LANGUAGES = ("en", "zh")
K = 40  # the search's candidates per list: limit 10 x SEARCH_CANDIDATES_FACTOR 4


def bq_indexes_build() -> dict[str, tuple[float, int]]:
    """One partial binary-quantized HNSW index per language: seconds and bytes of each."""
    from django.db import connection

    built = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        for language in LANGUAGES:
            name = f"chunk_embedding_bq_{language}"
            started = time.perf_counter()
            cursor.execute(
                f"CREATE INDEX {name} ON blog_chunk USING hnsw "  # noqa: S608 (constants)
                f"((binary_quantize(embedding)::bit({search_scale.DIMS})) bit_hamming_ops) "
                f"WITH (m = 16, ef_construction = 64) WHERE language = '{language}'"
            )
            seconds = time.perf_counter() - started
            cursor.execute("SELECT pg_relation_size(%s)", [name])
            built[name] = (seconds, cursor.fetchone()[0])
        cursor.execute("ANALYZE blog_chunk")
    return built


def bq_vector_statement(candidates: int):
    """`search_sql.vector_statement` with each language's list taken by a hamming walk of
    `candidates` rows re-ranked by exact cosine distance, in the same statement."""
    from blog import search_sql
    from blog.search_sql import Vector

    floating = search_sql.vector_statement  # the site's, taken before the swap
    hamming = (
        f"binary_quantize(blog_chunk.embedding)::bit({search_scale.DIMS}) "
        "<~> binary_quantize(%(vector)b)"
    )

    def statement(*, vector, lexemes=None, k, languages, lexical=""):
        statement.calls += 1
        params = {"vector": Vector(vector), "k": k, "bq": max(candidates, k)}
        if lexemes is None:
            query, params["lexical"] = search_sql._QUERY_OF_LEXICAL, lexical
        else:
            query, params["lexemes"] = search_sql._QUERY_OF_LEXEMES, lexemes or [""]
        # The distance is computed once, on the candidates; the article's title and slug and
        # the matched lexemes only for the k rows kept.
        columns = search_sql._COLUMNS_TEMPLATE.format(distance="blog_chunk.distance", query=query)
        published = search_sql._published_sql()
        parts = []
        for i, language in enumerate(languages):
            if language is None:  # a single-language blog: the float walk, as before
                sql, more = floating(
                    vector=vector, lexemes=lexemes, k=k, languages=(None,), lexical=lexical
                )
                parts.append(sql.replace("SELECT 0 AS list", f"SELECT {i} AS list", 1))
                params |= more
                continue
            params[f"language{i}"] = language
            parts.append(
                f"(SELECT {i} AS list, {columns} FROM ("  # noqa: S608 (constants only)
                "SELECT near.*, near.embedding <=> %(vector)b AS distance FROM ("
                f"SELECT blog_chunk.* FROM {search_sql._FROM} WHERE {published} "
                f"AND blog_chunk.language = %(language{i})s "
                f"ORDER BY {hamming} LIMIT %(bq)s) AS near "
                "ORDER BY distance, near.id LIMIT %(k)s) AS blog_chunk "
                "JOIN blog_article ON blog_article.id = blog_chunk.article_id "
                "ORDER BY blog_chunk.distance, blog_chunk.id)"
            )
        return " UNION ALL ".join(parts), params | search_sql._published_params()

    statement.calls = 0
    return statement


@contextlib.contextmanager
def vector_walk(mode: tuple[int, int] | None):
    """The search with the float walk (None) or (candidates, ef_search) of the bit walk."""
    restore = walk_set(mode)
    try:
        yield
    finally:
        restore()


def walk_set(mode: tuple[int, int] | None):
    """Put the bit walk in place (nothing for None); returns what puts the float walk back."""
    from blog import search_sql

    saved = search_sql.vector_statement, search_sql.hnsw_settings

    def restore() -> None:
        search_sql.vector_statement, search_sql.hnsw_settings = saved

    if mode is not None:
        candidates, ef_search = mode
        search_sql.vector_statement = bq_vector_statement(candidates)
        search_sql.hnsw_settings = lambda k: (
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'strict_order', true)",
            [str(max(ef_search, k))],
        )
    return restore


class Timers:
    """Seconds spent in a few of the search's functions, wrapped for the run."""

    def __init__(self) -> None:
        from blog import search, search_fetch

        self.seconds = {"database (lists_fetch)": 0.0, "fusion and evidence (_fuse)": 0.0}
        self._saved = [
            (search_fetch, "lists_fetch", "database (lists_fetch)"),
            (search, "_fuse", "fusion and evidence (_fuse)"),
        ]
        self._originals = []
        for module, name, label in self._saved:
            original = getattr(module, name)
            self._originals.append((module, name, original))
            setattr(module, name, self._timed(original, label))

    def _timed(self, function, label):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started

        return timed

    def take(self) -> dict[str, float]:
        taken = dict(self.seconds)
        self.seconds = dict.fromkeys(self.seconds, 0.0)
        return taken


def buffers_visited() -> int:
    """Every backend's buffer visits so far (hits and reads), once their stats are flushed.

    A busy backend sends its counts at most once a second and an idle one may hold them for
    ten, so each of the search's connections (its own and the idle side connections) is
    asked to flush when it next goes idle.
    """
    from django.db import connection

    from blog import parallel

    for side in list(parallel._idle):  # autocommit connections, idle between searches
        side.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    time.sleep(0.2)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = current_database()"
        )
        return cursor.fetchone()[0]


def searched(workload) -> tuple[list[float], list[list[dict]]]:
    return search_scale.timed_searches(workload, keep=lambda hit: hit.as_dict())


def explained(statement: tuple[str, dict], settings: tuple[str, list] | None) -> dict:
    from django.db import transaction

    from blog import search_sql

    with transaction.atomic(), search_sql.search_cursor() as cursor:
        if settings is not None:
            cursor.execute(*settings)
        sql, params = statement
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        return next(iter(cursor.fetchone().values()))[0]


def _scans(node: dict, found: dict[str, list[int]]) -> dict[str, list[int]]:
    name = node.get("Index Name", "")
    if name.startswith("chunk_embedding"):
        found.setdefault(name, []).append(node["Shared Hit Blocks"] + node["Shared Read Blocks"])
    for child in node.get("Plans", []):
        _scans(child, found)
    return found


def statements_profile(workload, modes) -> tuple[list[list], list[float], int]:
    """EXPLAIN ANALYZE of the vector statement in each mode, and of the text statement."""
    from django.db import transaction

    from blog import search, search_sql
    from blog.chunking import query_terms
    from blog.relevance import vocabulary
    from blog.spelling import corrected

    figures = {mode: {"ms": [], "plan": [], "buffers": [], "scans": {}} for mode in modes}
    recall10: dict = {mode: [] for mode in modes}
    recall40: dict = {mode: [] for mode in modes}
    text_ms, text_buffers = [], []
    for vector, text in workload:
        lists = {}
        for mode in modes:
            with vector_walk(mode):
                statement = search_sql.vector_statement(
                    vector=vector, k=K, languages=LANGUAGES, lexical=" ".join(query_terms(text))
                )
                settings = search_sql.hnsw_settings(K)
                plan = explained(statement, settings)
                with transaction.atomic(), search_sql.search_cursor() as cursor:
                    cursor.execute(*settings)
                    cursor.execute(*statement)
                    lists[mode] = search_sql.vector_split(cursor.fetchall(), len(LANGUAGES))
            row = figures[mode]
            row["ms"].append(plan["Execution Time"])
            row["plan"].append(plan["Planning Time"])
            row["buffers"].append(
                plan["Plan"]["Shared Hit Blocks"] + plan["Plan"]["Shared Read Blocks"]
            )
            for name, visits in _scans(plan["Plan"], {}).items():
                row["scans"].setdefault(name, []).extend(visits)
        for mode in modes:
            for top, into in ((10, recall10), (K, recall40)):
                into[mode].append(
                    sum(
                        len({r["id"] for r in got[:top]} & {r["id"] for r in want[:top]})
                        for got, want in zip(lists[mode], lists[None], strict=True)
                    )
                    / (top * len(LANGUAGES))
                )
        terms = corrected(query_terms(text), vocabulary.frequency)  # as the search does
        statement = search._text_statement(terms, K, vector)
        plan = explained(statement, None)
        text_ms.append(plan["Execution Time"])
        text_buffers.append(plan["Plan"]["Shared Hit Blocks"] + plan["Plan"]["Shared Read Blocks"])
    median = statistics.median
    rows = []
    for mode in modes:
        row = figures[mode]
        scans = " / ".join(
            f"{name.removeprefix('chunk_embedding_')} {median(v):.0f}"
            for name, v in sorted(row["scans"].items())
        )
        rows.append(
            [
                _name(mode),
                f"{median(row['ms']):.2f} / {percentile(row['ms'], 95):.2f}",
                f"{median(row['plan']):.2f}",
                f"{median(row['buffers']):.0f}",
                scans,
                f"{statistics.mean(recall10[mode]):.3f}",
                f"{statistics.mean(recall40[mode]):.3f}",
            ]
        )
    return rows, text_ms, round(median(text_buffers))


def _name(mode: tuple[int, int] | None) -> str:
    return "float" if mode is None else f"bq {mode[0]} (ef_search {mode[1]})"


def other_bench(script: str, argv: list[str], mode: tuple[int, int]) -> int:
    """Run another bench's main with the bit indexes and the bit walk in place."""
    import _django

    started = _django.django_start

    def django_start() -> None:
        started()
        bq_indexes_build()  # on the empty table: the bench's own indexing fills them
        walk_set(mode)  # for the rest of the process
        atexit.register(walked)

    def walked() -> None:  # runs before the bench's server goes (registered after it)
        from blog import search_sql

        sql, params = search_sql.vector_statement(
            vector=[1.0] * search_scale.DIMS, k=K, languages=LANGUAGES, lexical="agent"
        )
        plan = explained((sql, params), search_sql.hnsw_settings(K))
        print(
            f"\nVector statements taken by the bit walk: {search_sql.vector_statement.calls}; "
            f"the walks' indexes: {', '.join(sorted(_scans(plan['Plan'], {})))}."
        )

    _django.django_start = django_start
    sys.argv = [script, *argv]
    print(f"{script} {' '.join(argv)}, vector lists by the bit walk: {_name(mode)}\n")
    runpy.run_path(script, run_name="__main__")  # its sys.exit ends this process
    return 0


def hamming_fidelity(
    chunks: dict[str, np.ndarray],
    queries: np.ndarray,
    sizes=(10, 20, 40, 80, 160),
    *,
    centred: bool = False,
) -> list[list]:
    """Without any index: the share of each query's cosine top-10 (and top-40) chunks, per
    language, among its top-N chunks by the hamming distance of the sign bits (`centred`: the
    signs of the vectors less the language's mean vector)."""
    rows = []
    for language, vectors in chunks.items():
        similarity = queries @ (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).T
        centre = vectors.mean(axis=0) if centred else 0.0
        bits = (vectors - centre) > 0
        by_cosine = np.argsort(-similarity, axis=1)
        by_hamming = np.argsort(
            np.stack([(bits != ((query - centre) > 0)).sum(axis=1) for query in queries]),
            axis=1,
            kind="stable",
        )
        for size in sizes:
            if size > len(vectors):
                break
            held = [
                [
                    len(set(cosine[:top]) & set(hamming[:size])) / min(top, len(vectors))
                    for top in (10, 40)
                ]
                for cosine, hamming in zip(by_cosine, by_hamming, strict=True)
            ]
            rows.append(
                [
                    f"{language} ({len(vectors):,} chunks)",
                    size,
                    f"{np.mean([h[0] for h in held]):.3f}",
                    f"{np.mean([h[1] for h in held]):.3f}" if len(vectors) > 40 else "",
                ]
            )
    return rows


def constant_signs(vectors: np.ndarray) -> float:
    """The share of dimensions whose sign is the same in more than 90% of the vectors."""
    positive = (vectors > 0).mean(axis=0)
    return float(np.mean((positive > 0.9) | (positive < 0.1)))


def published_vectors(languages=LANGUAGES) -> dict[str, np.ndarray]:
    from blog import search_sql

    found: dict[str, list] = {language: [] for language in languages}
    with search_sql.search_cursor() as cursor:  # vectors read in binary: the ORM parses text
        cursor.execute(
            "SELECT blog_chunk.language, blog_chunk.embedding FROM blog_chunk "  # noqa: S608
            "JOIN blog_article ON blog_article.id = blog_chunk.article_id "
            f"WHERE {search_sql._published_sql()} AND blog_chunk.language = ANY(%(languages)s)",
            search_sql._published_params() | {"languages": list(languages)},
            binary=True,
        )
        for row in cursor:
            found[row["language"]].append(row["embedding"].to_numpy())
    return {language: np.stack(vectors) for language, vectors in found.items() if vectors}


def e5_fidelity() -> int:
    """The same on the demo articles' real multilingual-e5-small vectors and the eval questions."""
    import json

    django_start()
    from _django import reindex_signals_off

    from blog.embeddings import embedder_get
    from blog.indexing import articles_reindex
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
    articles_reindex()
    bench = Path(__file__).resolve().parent
    questions = [
        json.loads(line)["q"] for line in (bench / "retrieval_eval.jsonl").read_text().splitlines()
    ] + [
        item["question"]
        for item in map(json.loads, (bench / "answer_eval.jsonl").read_text().splitlines())
        if item.get("question")
    ]
    embedder = embedder_get()
    queries = np.array([embedder.embed_query(q) for q in questions], dtype=np.float32)
    chunks = published_vectors()
    for title, centred in (("demo corpus, e5-small", False), ("the same, centred", True)):
        print(
            table(
                [title, "hamming top-N", "holds cosine top-10", "holds top-40"],
                hamming_fidelity(chunks, queries, sizes=(10, 20, 40), centred=centred),
            )
        )
        print()
    signs = ", ".join(f"{lang} {constant_signs(v):.3f}" for lang, v in chunks.items())
    print(
        f"{len(questions)} questions (bench/retrieval_eval.jsonl and bench/answer_eval.jsonl). "
        f"Dimensions whose sign is the same in more than 90% of the chunks: {signs} "
        f"(isotropic vectors: about 0). {machine_note()}."
    )
    return 0


def main() -> int:
    ours, other = sys.argv[1:], None
    if "--with" in ours:
        at = ours.index("--with")
        ours, other = ours[:at], ours[at + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--block", type=int, default=50, help="queries per mode and block")
    parser.add_argument("--candidates", default="40,80,160")
    parser.add_argument("--ef-extra", type=float, default=0.25)
    parser.add_argument("--explained", type=int, default=50, help="queries EXPLAINed per mode")
    parser.add_argument("--quick", action="store_true", help="20,000 chunks, 100 queries")
    parser.add_argument("--e5", action="store_true", help="hamming fidelity on the demo's e5")
    args, _ = parser.parse_known_args(ours)  # run_all.py passes its own flags to every bench
    if other:
        candidates = int(args.candidates.split(",")[0])
        return other_bench(
            other[0], other[1:], (candidates, candidates + round(candidates * args.ef_extra))
        )
    if args.e5:
        return e5_fidelity()
    if args.quick:
        args.chunks, args.queries, args.block, args.explained = 20_000, 100, 25, 10
    django_start()
    from django.db import connection

    rng = np.random.default_rng(42)
    search_scale.drop_indexes()
    centres, words, _ = search_scale.load(args.chunks, rng)
    builds = search_scale.build_indexes()
    bq_builds = bq_indexes_build()
    workload = search_scale.queries(rng, centres, words, args.queries + 20)
    warmup, workload = workload[:20], workload[20:]
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE relname = 'blog_chunk'"
        )
        toast = cursor.fetchone()[0]
        cursor.execute(
            "SELECT indexrelid::regclass::text FROM pg_index "
            "WHERE indrelid = 'blog_chunk'::regclass"
        )
        for (relation,) in [*cursor.fetchall(), ("blog_chunk",), ("blog_article",), (toast,)]:
            cursor.execute("SELECT pg_prewarm(%s)", [relation])
        cursor.execute(
            "SELECT relname, pg_relation_size(oid) FROM pg_class "
            "WHERE relname LIKE 'chunk_embedding%%'"
        )
        sizes = dict(cursor.fetchall())
    candidates = [int(n) for n in args.candidates.split(",")]
    modes = [None] + [(n, n + round(n * args.ef_extra)) for n in candidates]
    for mode in modes:
        with vector_walk(mode):
            searched(warmup)
    load_start = os.getloadavg()[0]
    timers = Timers()
    latencies = {mode: [] for mode in modes}
    hits = {mode: [] for mode in modes}
    cpu = dict.fromkeys(modes, 0.0)
    buffers = dict.fromkeys(modes, 0)
    spent = {mode: dict.fromkeys(timers.seconds, 0.0) for mode in modes}
    blocks = range(0, len(workload), args.block)
    for number, start in enumerate(blocks):
        block = workload[start : start + args.block]
        shift = number % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            with vector_walk(mode):
                visited, used = buffers_visited(), cpu_seconds()
                timers.take()
                seconds, found = searched(block)
                cpu[mode] += cpu_seconds() - used
                for label, value in timers.take().items():
                    spent[mode][label] += value
                buffers[mode] += buffers_visited() - visited
            latencies[mode] += seconds
            hits[mode].append(found)
    load_end = os.getloadavg()[0]
    statement_rows, text_ms, text_buffers = statements_profile(workload[: args.explained], modes)
    load_after_explain = os.getloadavg()[0]

    ms = lambda values, p: percentile(values, p) * 1000  # noqa: E731
    float_hits = [h for block in hits[None] for h in block]
    rows, profile_rows = [], []
    for mode in modes:
        mine = [h for block in hits[mode] for h in block]
        same = sum(a == b for a, b in zip(mine, float_hits, strict=True))
        same_articles = sum(
            [h["article_id"] for h in a] == [h["article_id"] for h in b]
            for a, b in zip(mine, float_hits, strict=True)
        )
        recall = statistics.mean(
            len({h["article_id"] for h in a} & {h["article_id"] for h in b}) / max(1, len(b))
            for a, b in zip(mine, float_hits, strict=True)
        )
        n = len(latencies[mode])
        rows.append(
            [
                _name(mode),
                f"{ms(latencies[mode], 50):.2f} / {ms(latencies[mode], 95):.2f}",
                f"{ms(latencies[mode], 50) / ms(latencies[None], 50):.2f}",
                f"{ms(latencies[mode], 95) / ms(latencies[None], 95):.2f}",
                f"{cpu[mode] * 1000 / n:.1f}",
                f"{cpu[mode] / cpu[None]:.2f}",
                f"{buffers[mode] / n:.0f}",
                f"{same} / {n}",
                f"{same_articles} / {n}",
                f"{recall:.3f}",
            ]
        )
        total = sum(latencies[mode])
        database = spent[mode]["database (lists_fetch)"]
        fusion = spent[mode]["fusion and evidence (_fuse)"]
        profile_rows.append(
            [
                _name(mode),
                f"{total * 1000 / n:.2f}",
                f"{database * 1000 / n:.2f}",
                f"{fusion * 1000 / n:.2f}",
                f"{(total - database - fusion) * 1000 / n:.2f}",
            ]
        )
    print(
        table(
            [
                f"{args.chunks:,} chunks, hybrid top-10",
                "p50 / p95 ms",
                "/ float p50",
                "/ float p95",
                "CPU ms per search",
                "/ float CPU",
                "buffer visits per search",
                "identical hits and evidence",
                "identical article ids",
                "recall of float top-10",
            ],
            rows,
        )
    )
    print()
    print(
        table(
            [
                f"vector statement, EXPLAIN ANALYZE, {args.explained} queries",
                "execution p50 / p95 ms",
                "planning p50 ms",
                "buffers p50",
                "buffers per index scan p50",
                "chunk recall@10 of float lists",
                "chunk recall@40",
            ],
            statement_rows,
        )
    )
    print(
        f"\nText statement (both halves' other statement, the same in every mode), EXPLAIN "
        f"ANALYZE on the same queries: execution p50 / p95 {statistics.median(text_ms):.2f} / "
        f"{percentile(text_ms, 95):.2f} ms, {text_buffers} buffers p50."
    )
    print()
    print(
        table(
            [
                "mean ms per hybrid search",
                "whole search",
                "database (one round trip, both halves)",
                "fusion and evidence",
                "other Python",
            ],
            profile_rows,
        )
    )
    index_rows = [
        [name, f"{seconds:.1f} s", f"{sizes[name] / 2**20:.1f} MB"]
        for name, (seconds, _) in bq_builds.items()
    ] + [
        [name, f"{builds[name]:.1f} s", f"{sizes[name] / 2**20:.1f} MB"]
        for name in ("chunk_embedding_hnsw_en", "chunk_embedding_hnsw_zh")
    ]
    print()
    print(table(["index", "build", "size"], index_rows))
    print()
    print(
        table(
            ["no index, exact ranking", "hamming top-N", "holds cosine top-10", "holds top-40"],
            hamming_fidelity(
                published_vectors(), np.array([v for v, _ in workload[:100]], dtype=np.float32)
            ),
        )
    )
    print(
        f"\n{len(workload)} queries per mode in blocks of {args.block}, the modes' order rotating "
        f"from block to block, after 20 warm-up searches per mode. Load average {load_start:.1f} "
        f"at the start, {load_end:.1f} at the end of the timed searches, "
        f"{load_after_explain:.1f} after EXPLAIN. {machine_note()}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
