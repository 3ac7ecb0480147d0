"""Retrieval quality on the demo articles: vector-only, full-text-only and hybrid (RRF).

    python bench/retrieval_quality.py

Loads the 14 demo articles into a throwaway database, indexes them with the configured
embedder (the bundled multilingual-e5-small by default) and asks every question of
bench/retrieval_eval.jsonl (English and Chinese, each naming the article that answers it).
A question scores when that article is the first hit (hit@1) or among the first five (hit@5);
MRR is the mean of 1/rank of that article within the first ten (0 when absent).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, machine_note, reindex_signals_off, table  # noqa: E402

EVAL = Path(__file__).resolve().parent / "retrieval_eval.jsonl"
DEPTH = 10


def questions() -> list[dict]:
    return [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line]


def rank_of(slug: str, hits) -> int | None:
    urls = [hit.url for hit in hits]
    target = f"/articles/{slug}/"
    return urls.index(target) + 1 if target in urls else None


def score(ranks: list[int | None]) -> tuple[float, float, float]:
    n = len(ranks)
    hit1 = sum(rank == 1 for rank in ranks) / n
    hit5 = sum(rank is not None and rank <= 5 for rank in ranks) / n
    mrr = sum(1 / rank for rank in ranks if rank is not None) / n
    return hit1, hit5, mrr


def main() -> int:
    django_start()
    from django.conf import settings

    from blog.indexing import articles_reindex
    from blog.search import article_search, article_search_text, article_search_vector
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
    summary = articles_reindex()
    modes: dict[str, Callable] = {
        "vector only": lambda q: article_search_vector(query=q, limit=DEPTH),
        "full-text only": lambda q: article_search_text(query=q, limit=DEPTH),
        "hybrid (RRF)": lambda q: article_search(query=q, limit=DEPTH, min_relevance=0),
    }
    items = questions()
    rows, misses = [], []
    for name, search in modes.items():
        started = time.perf_counter()
        ranks = [rank_of(item["slug"], search(item["q"])) for item in items]
        per_query_ms = (time.perf_counter() - started) * 1000 / len(items)
        for lang in ("en", "zh"):
            subset = [r for r, item in zip(ranks, items, strict=True) if item["lang"] == lang]
            rows.append([name, lang, len(subset), *(f"{x:.3f}" for x in score(subset)), ""])
        hit1, hit5, mrr = score(ranks)
        rows.append(
            [
                f"**{name}**",
                "all",
                len(ranks),
                f"**{hit1:.3f}**",
                f"**{hit5:.3f}**",
                f"**{mrr:.3f}**",
                f"{per_query_ms:.1f}",
            ]
        )
        if name.startswith("hybrid"):
            misses = [item for r, item in zip(ranks, items, strict=True) if r is None or r > 5]

    print(table(["mode", "lang", "questions", "hit@1", "hit@5", f"MRR@{DEPTH}", "ms/query"], rows))
    print(
        f"\n{summary.changed} articles, {summary.embedded} chunks "
        f"(target {settings.CHUNK_TARGET_TOKENS} tokens, overlap {settings.CHUNK_OVERLAP_TOKENS}), "
        f"model {settings.EMBEDDING_MODEL}; {SearchConfig.describe(settings)}. "
        f"ms/query includes embedding the question. {machine_note()}."
    )
    for item in misses:
        print(f"- hybrid miss (not in top 5): {item['q']} -> {item['slug']}")
    return 0


class SearchConfig:
    @staticmethod
    def describe(settings) -> str:
        return (
            f"candidates {settings.SEARCH_CANDIDATES_FACTOR}x limit per list, "
            f"RRF k={settings.SEARCH_RRF_K}"
        )


if __name__ == "__main__":
    sys.exit(main())
