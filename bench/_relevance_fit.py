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
    hit above it, and the weights are scored by how many in-scope questions keep a right
    article above it in their first five. With 22 out-of-scope questions a half, the single
    best triple rests on one or two questions (the first fit did: 21 of 22 declined on the
    tuning half, 17 of 22 on the test half), so the weights kept are the mean of every triple
    within one question of the best, on a coarse grid, and the bar is set again for them.
    Then relevance = sigmoid(s * (score - bar)), s fitted by logistic regression on every hit
    (right article or not), so 0.5 is the bar.
    """
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], []).append(row)
    outs = [hits for hits in by_question.values() if not hits[0]["in_scope"]]
    ins = [hits for hits in by_question.values() if hits[0]["in_scope"]]
    allow = int(len(outs) * (1 - decline))

    def bar_for(a: float, b: float, c: float) -> float:
        tops = sorted((max(linear(h, a, b, c) for h in hits) for hits in outs), reverse=True)
        return tops[allow] + 1e-9  # a hit must score above every question not declined

    def kept(a: float, b: float, c: float, bar: float) -> int:
        def first_five(hits: list[dict]) -> list[dict]:
            return sorted(hits, key=lambda h: -linear(h, a, b, c))[:5]

        return sum(
            any(h["right"] and linear(h, a, b, c) >= bar for h in first_five(hits)) for hits in ins
        )

    scored = []
    for a, b, c in product(range(0, 41, 4), range(0, 61, 4), range(0, 41, 4)):
        a, b, c = a / 100, b / 100, c / 100
        scored.append((kept(a, b, c, bar_for(a, b, c)), a, b, c))
    best = max(score for score, *_ in scored)
    near = [weights for score, *weights in scored if score >= best - 1]
    a, b, c = (sum(w[i] for w in near) / len(near) for i in range(3))
    bar = bar_for(a, b, c)
    print(
        f"{len(near)} triples within one question of the best ({best}/{len(ins)}); their mean"
        f" keeps {kept(a, b, c, bar)}/{len(ins)}, out-of-scope declined >= {decline:.0%}"
    )
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
