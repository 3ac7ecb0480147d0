"""Fit the relevance calibration (blog/relevance.py WEIGHTS) on the tuning half of the eval set.

    python bench/relevance_fit.py [--split tune] [--dump features.json]

Loads the demo articles into a throwaway database, searches every question of
bench/answer_eval.jsonl in the split (unfiltered, top 10) and collects, per returned article,
the evidence (similarity, coverage, known) and whether that article is a right one. A logistic
regression on those rows gives the weights; the bar is the lowest relevance that still declines
>= 95% of the split's out-of-scope questions, reported with what it keeps of the in-scope ones.
Follow-ups are searched with both turns, as the assistant searches them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, reindex_signals_off  # noqa: E402

EVAL = Path(__file__).resolve().parent / "answer_eval.jsonl"
FEATURES = ("similarity", "coverage", "known")


def collect(split: str) -> list[dict]:
    from agent.evaluation import items_load, items_select
    from blog.search import article_search

    rows = []
    for item in items_select(items_load(EVAL), split):
        query = " ".join(item.turns)
        hits = article_search(query=query, limit=10, min_relevance=0.0)
        for hit in hits:
            slug = hit.url.strip("/").split("/")[-1]
            rows.append(
                {
                    "id": item.id,
                    "kind": item.kind,
                    "rank": hit.rank,
                    "right": slug in item.expected,
                    "in_scope": item.in_scope,
                    **{name: getattr(hit, name) for name in FEATURES},
                }
            )
    return rows


def fit(rows: list[dict], epochs: int = 4000, rate: float = 0.5) -> dict[str, float]:
    """Plain logistic regression by gradient descent on standardised features."""
    import numpy as np

    x = np.array([[row[name] for name in FEATURES] for row in rows], dtype=float)
    y = np.array([1.0 if row["right"] else 0.0 for row in rows])
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / std
    w, b = np.zeros(len(FEATURES)), 0.0
    positive = y.mean()
    sample = np.where(y == 1, 0.5 / positive, 0.5 / (1 - positive))  # balance the classes
    for _ in range(epochs):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        grad = (p - y) * sample
        w -= rate * (z.T @ grad) / len(y)
        b -= rate * grad.mean()
    weights = {name: float(w[i] / std[i]) for i, name in enumerate(FEATURES)}
    weights["bias"] = float(b - sum(w[i] * mean[i] / std[i] for i in range(len(FEATURES))))
    return weights


def main() -> int:
    split = sys.argv[sys.argv.index("--split") + 1] if "--split" in sys.argv else "tune"
    django_start()
    from blog.indexing import articles_reindex
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
    articles_reindex()
    rows = collect(split)
    if "--dump" in sys.argv:
        Path(sys.argv[sys.argv.index("--dump") + 1]).write_text(json.dumps(rows, indent=0))
    weights = fit(rows)
    print("weights:", {name: round(value, 2) for name, value in weights.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
