"""Fit the relevance calibration (blog/relevance.py WEIGHTS) on the tuning half of the eval set.

    python bench/_relevance_fit.py [--split tune] [--dump features.json]

Loads the demo articles into a throwaway database, searches every question of
bench/answer_eval.jsonl in the split (unfiltered, top 10) and collects, per returned article,
the evidence (similarity, coverage, known) and whether that article is a right one. A logistic
score (similarity + a coverage + b known + c cross-language) is grid-searched so that the bar
declines >= 95% of the split's out-of-scope questions while keeping the most in-scope ones,
then Platt-scaled into 0-1 (see `fit`).
Follow-ups are searched with both turns, as the assistant searches them.
"""

from __future__ import annotations

import json
import math
import sys
from itertools import product
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
                    "language": hit.language,
                    "qlang": item.lang,
                    **{name: getattr(hit, name) for name in FEATURES},
                }
            )
    return rows


def linear(row: dict, a: float, b: float, c: float) -> float:
    cross = row["language"] != row["qlang"]
    return row["similarity"] + a * row["coverage"] + b * row["known"] + c * cross


def fit(rows: list[dict], decline: float = 0.95) -> dict[str, float]:
    """Grid-search the linear score, then Platt-scale it into a 0-1 relevance.

    For each (a, b, c) the bar is set so that `decline` of the out-of-scope questions have no
    hit above it; the weights that let the most in-scope questions keep a right article in
    their first five win (ties: smaller weights). Then relevance = sigmoid(s * (score - bar)),
    s fitted by logistic regression on every hit (right article or not), so 0.5 is the bar.
    """
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], []).append(row)
    outs = [hits for hits in by_question.values() if not hits[0]["in_scope"]]
    ins = [hits for hits in by_question.values() if hits[0]["in_scope"]]
    allow = int(len(outs) * (1 - decline))
    best = None
    for a, b, c in product(range(0, 41, 2), range(0, 61, 2), range(0, 41, 2)):
        a, b, c = a / 100, b / 100, c / 100
        tops = sorted((max(linear(h, a, b, c) for h in hits) for hits in outs), reverse=True)
        bar = tops[allow]
        kept = sum(any(h["right"] and linear(h, a, b, c) > bar for h in hits[:5]) for hits in ins)
        key = (kept, -(a + b + c))
        if best is None or key > best[0]:
            best = (key, a, b, c, bar)
    (kept, _), a, b, c, bar = best
    print(f"in-scope kept {kept}/{len(ins)}, out-of-scope declined >= {decline:.0%}")
    xs = [linear(row, a, b, c) - bar for row in rows]
    ys = [1.0 if row["right"] else 0.0 for row in rows]
    s = 10.0
    for _ in range(20000):
        gradient = sum((1 / (1 + math.exp(-s * x)) - y) * x for x, y in zip(xs, ys, strict=True))
        s -= 5.0 * gradient / len(xs)
    return {
        "bias": -s * bar,
        "similarity": s,
        "coverage": s * a,
        "known": s * b,
        "cross": s * c,
    }


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
