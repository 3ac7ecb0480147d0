"""Fit the relevance calibration (blog/relevance.py WEIGHTS) on the tuning half of the eval set.

    python bench/_relevance_fit.py [--split tune] [--dump features.json] [--all-sets]
        [--here] [--decline 0.95 | --decline current] [--no-more-wrong] [--near]
        [--phrase-few N] [--rows features.json]

Loads the demo articles into a throwaway database (`--here`: searches the configured database
instead), searches every question of bench/answer_eval.jsonl in the split (`--all-sets`: of
every bench/answer_eval*.jsonl but the page sets, whose questions are asked on an article's
page) unfiltered, top 10, and collects, per returned article, the evidence (similarity,
coverage, known, phrases) and whether that article is a right one. A logistic score
(similarity + a coverage + b known + c cross-language + d phrases) is grid-searched so that the
bar declines >= 95% of the split's out-of-scope questions (`--decline current`: as many as
today's WEIGHTS decline on the same rows) while keeping the most in-scope ones, then
Platt-scaled into 0-1 (see `fit`). Follow-ups are searched with both turns, as the assistant
searches them. `known` is counted as relevance() counts it (1 for a singled-out article).
"""

from __future__ import annotations

import json
import sys
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, reindex_signals_off  # noqa: E402

EVAL = Path(__file__).resolve().parent / "answer_eval.jsonl"
FEATURES = ("similarity", "coverage", "known", "phrases", "margin")
NAMES = ("coverage", "known", "cross", "phrases")  # the weights, each a share of similarity's
# The grid, in hundredths of similarity's weight (coverage, known, cross, phrases); `--near`:
# steps of one hundredth in a band around today's WEIGHTS (0.093, 0.107, 0.067, 0).
GRID = (range(0, 41, 4), range(0, 61, 4), range(0, 41, 4), range(0, 13, 2))
NEAR_GRID = (range(6, 15), range(6, 17), range(4, 11), range(0, 13))


def eval_files(all_sets: bool) -> list[Path]:
    if not all_sets:
        return [EVAL]
    return [f for f in sorted(EVAL.parent.glob("answer_eval*.jsonl")) if "pages" not in f.name]


def collect(split: str, files: list[Path]) -> list[dict]:
    from agent.evaluation import items_load, items_select
    from blog.relevance import Evidence, query_language, singled_out
    from blog.search import article_search

    rows = []
    for path in files:
        for item in items_select(items_load(path), split):
            query = " ".join(item.turns)
            qlang = query_language(query)
            for hit in article_search(query=query, limit=10, min_relevance=0.0):
                slug = hit.url.strip("/").split("/")[-1]
                evidence = Evidence(
                    hit.similarity,
                    hit.coverage,
                    hit.known,
                    hit.language != qlang,
                    hit.margin,
                    qlang,
                )
                rows.append(
                    {
                        "id": f"{path.stem}:{item.id}",
                        "kind": item.kind,
                        "rank": hit.rank,
                        "right": slug in item.expected,
                        "in_scope": item.in_scope,
                        "language": hit.language,
                        "qlang": qlang,
                        "singled_out": singled_out(evidence),
                        **{name: getattr(hit, name) for name in FEATURES},
                    }
                )
    return rows


def _matrix(rows: list[dict]) -> tuple:
    """Hits as (questions x 10 x features) arrays, padded; in-scope flags; right flags."""
    import numpy as np

    order: dict[str, list[dict]] = {}
    for row in rows:
        order.setdefault(row["id"], []).append(row)
    questions = list(order.values())
    depth = max(len(hits) for hits in questions)
    x = np.zeros((len(questions), depth, 5))
    present = np.zeros((len(questions), depth), dtype=bool)
    right = np.zeros((len(questions), depth), dtype=bool)
    for q, hits in enumerate(questions):
        for h, row in enumerate(hits):
            known = 1.0 if row.get("singled_out") else row["known"]
            cross = float(row["language"] != row["qlang"])
            x[q, h] = (row["similarity"], row["coverage"], known, cross, row.get("phrases", 0.0))
            present[q, h], right[q, h] = True, row["right"]
    in_scope = np.array([hits[0]["in_scope"] for hits in questions])
    return x, present, right, in_scope


def linear(row: dict, a: float, b: float, c: float, d: float = 0.0) -> float:
    known = 1.0 if row.get("singled_out") else row["known"]
    cross = row["language"] != row["qlang"]
    score = row["similarity"] + a * row["coverage"] + b * known + c * cross
    return score + d * row.get("phrases", 0.0)


def today(rows: list[dict]) -> tuple[float, int]:
    """Today's WEIGHTS on these rows: the share of out-of-scope questions declined, and how
    many in-scope questions have a wrong article first above the bar."""
    from blog.relevance import WEIGHTS

    def z(row: dict) -> float:
        shares = (WEIGHTS[n] / WEIGHTS["similarity"] for n in NAMES)
        return WEIGHTS["bias"] + WEIGHTS["similarity"] * linear(row, *shares)

    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], []).append(row)
    outs = [
        any(z(h) >= 0 for h in hits) for hits in by_question.values() if not hits[0]["in_scope"]
    ]
    firsts = [max(hits, key=z) for hits in by_question.values() if hits[0]["in_scope"]]
    return 1 - sum(outs) / len(outs), sum(z(h) >= 0 and not h["right"] for h in firsts)


def fit(
    rows: list[dict], decline: float = 0.95, wrong: int | None = None, grid: tuple = GRID
) -> dict[str, float]:
    """Grid-search the linear score, then Platt-scale it into a 0-1 relevance.

    For each (a, b, c) the bar is set so that `decline` of the out-of-scope questions have no
    hit above it, and the weights are scored by how many in-scope questions keep a right
    article above it in their first five. With 22 out-of-scope questions a half, the single
    best triple rests on one or two questions (the first fit did: 21 of 22 declined on the
    tuning half, 17 of 22 on the test half), so the weights kept are the mean of every triple
    within one question of the best, on a coarse grid, and the bar is set again for them.
    Then relevance = sigmoid(s * (score - bar)), s fitted by logistic regression on every hit
    (right article or not), so 0.5 is the bar. With `wrong` set, only weights under which at
    most that many in-scope questions have a wrong article first above the bar are scored (a
    wrong citation costs more than a decline).
    """
    import numpy as np

    x, present, right, in_scope = _matrix(rows)
    outs, ins = int((~in_scope).sum()), int(in_scope.sum())
    allow = int(outs * (1 - decline))

    def scores(hits, weights) -> np.ndarray:
        return np.where(present[hits], x[hits] @ np.array([1.0, *weights]), -np.inf)

    def bar_for(weights) -> float:
        tops = np.sort(scores(~in_scope, weights).max(axis=1))[::-1]
        return tops[allow] + 1e-9  # a hit must score above every question not declined

    def kept(weights, bar: float) -> int:
        score = scores(in_scope, weights)
        first = np.argsort(-score, axis=1, kind="stable")[:, :5]
        top = np.take_along_axis(score, first, axis=1)
        good = np.take_along_axis(right[in_scope], first, axis=1)
        if wrong is not None and ((top[:, 0] >= bar) & ~good[:, 0]).sum() > wrong:
            return -1
        return int(((top >= bar) & good).any(axis=1).sum())

    scored = []
    for weights in product(*grid):
        weights = tuple(w / 100 for w in weights)
        scored.append((kept(weights, bar_for(weights)), weights))
    best = max(score for score, _ in scored)
    near = [weights for score, weights in scored if score >= best - 1]
    a, b, c, d = (sum(w[i] for w in near) / len(near) for i in range(4))
    bar = bar_for((a, b, c, d))
    print(
        f"{len(near)} weight sets within one question of the best ({best}/{ins}); their mean"
        f" keeps {kept((a, b, c, d), bar)}/{ins}, out-of-scope declined >= {decline:.1%}"
        f" ({outs - allow}/{outs})"
    )
    xs = np.array([linear(row, a, b, c, d) - bar for row in rows])
    ys = np.array([1.0 if row["right"] else 0.0 for row in rows])
    s = 10.0
    for _ in range(20000):
        gradient = float(((1 / (1 + np.exp(-s * xs)) - ys) * xs).sum())
        s -= 5.0 * gradient / len(xs)
    return {
        "bias": -s * bar,
        "similarity": s,
        "coverage": s * a,
        "known": s * b,
        "cross": s * c,
        "phrases": s * d,
    }


def main() -> int:
    split = _option("--split", "tune")
    if "--here" in sys.argv:
        _here()
    else:
        django_start()
        from blog.indexing import articles_reindex
        from blog.services import demo_articles_load

        with reindex_signals_off():
            demo_articles_load()
        articles_reindex()
    if "--phrase-few" in sys.argv:
        import blog.relevance

        blog.relevance.PHRASE_FEW = int(_option("--phrase-few", ""))
    if "--rows" in sys.argv:  # rows a previous --dump wrote: refit without searching again
        rows = json.loads(Path(_option("--rows", "")).read_text())
    else:
        rows = collect(split, eval_files("--all-sets" in sys.argv))
    if "--dump" in sys.argv:
        Path(_option("--dump", "")).write_text(json.dumps(rows, indent=0))
    declined, wrong = today(rows)
    decline = _option("--decline", "0.95")
    decline = declined if decline == "current" else float(decline)
    print(f"today's WEIGHTS: {declined:.1%} out-of-scope declined, {wrong} wrong first hits")
    grid = NEAR_GRID if "--near" in sys.argv else GRID
    weights = fit(rows, decline, wrong if "--no-more-wrong" in sys.argv else None, grid)
    print("weights:", {name: round(value, 2) for name, value in weights.items()})
    return 0


def _option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def _here() -> None:
    """Django against the configured database (DATABASE_URL, or the project's .data)."""
    import os

    import django

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()


if __name__ == "__main__":
    sys.exit(main())
