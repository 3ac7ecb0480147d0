"""Answer quality on the demo articles: the eval set through search and through the assistant.

    python bench/answer_quality.py [--file PATH] [--split test|tune|all] [--quick] [--json OUT]
    python bench/answer_quality.py --file 'bench/answer_eval*.jsonl' --split test --quick

Loads the 14 demo articles into a throwaway database and indexes them (the bundled
multilingual-e5-small by default). Then, for the split of the eval file (--file, by default
bench/answer_eval.jsonl; bench/answer_eval_fresh.jsonl is the second, blind set):

1. search alone, three ways (hybrid, vector only, full text only): hit@1, hit@5 and MRR of a
   right article per kind (unfiltered, top 10; follow-ups searched with both turns), and the
   relevance bar: in-scope questions that keep a right article above it, out-of-scope ones
   left with no hit above it;
2. `manage.py eval_answers` on the same split with the offline model (the real turn runner).

A --file with a `*` reads every matching set: the split's questions of all of them together.

--quick skips step 2.
"""

from __future__ import annotations

import glob
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, machine_note, reindex_signals_off, table  # noqa: E402

EVAL = Path(__file__).resolve().parent / "answer_eval.jsonl"
DEPTH = 10


def search_figures(items, search: Callable) -> dict[str, list]:
    """Per kind: [n, hit@1, hit@5, MRR, in-scope kept by the bar, out-of-scope declined]."""
    from django.conf import settings

    groups: dict[str, list[tuple]] = {}
    for item in items:
        hits = search(" ".join(item.turns))
        slugs = [hit.url.strip("/").split("/")[-1] for hit in hits]
        ranks = [slugs.index(slug) + 1 for slug in item.expected if slug in slugs]
        rank = min(ranks, default=None)
        bar = settings.SEARCH_MIN_RELEVANCE
        kept = any(
            hit.relevance >= bar and slug in item.expected
            for hit, slug in zip(hits[:5], slugs, strict=False)
        )
        declined = not any(hit.relevance >= bar for hit in hits)
        for group in ("all", item.kind):
            groups.setdefault(group, []).append((item.in_scope, rank, kept, declined))
    return {name: _row(rows) for name, rows in groups.items()}


def _row(rows: list[tuple]) -> list:
    scoped = [(rank, kept) for in_scope, rank, kept, _ in rows if in_scope]
    out = [declined for in_scope, _, _, declined in rows if not in_scope]

    def share(values) -> str:
        values = list(values)
        return f"{sum(values) / len(values):.3f}" if values else "–"

    return [
        len(rows),
        share(rank == 1 for rank, _ in scoped),
        share(rank is not None and rank <= 5 for rank, _ in scoped),
        f"{sum(1 / rank for rank, _ in scoped if rank) / len(scoped):.3f}" if scoped else "–",
        share(kept for _, kept in scoped),
        share(out),
    ]


def main() -> int:
    split = sys.argv[sys.argv.index("--split") + 1] if "--split" in sys.argv else "test"
    pattern = sys.argv[sys.argv.index("--file") + 1] if "--file" in sys.argv else str(EVAL)
    paths = [Path(p) for p in sorted(glob.glob(pattern))] if "*" in pattern else [Path(pattern)]
    django_start()
    from django.conf import settings

    from agent.evaluation import items_load, items_select, report, report_table, run_blocking
    from blog.indexing import articles_reindex
    from blog.search import article_search, article_search_text, article_search_vector
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
    summary = articles_reindex()
    items = [  # ids are unique within a set only
        replace(item, id=f"{path.stem}/{item.id}") if len(paths) > 1 else item
        for path in paths
        for item in items_select(items_load(path), split)
    ]
    modes = {
        "hybrid": article_search,
        "vector only": article_search_vector,
        "full text only": article_search_text,
    }
    rows = []
    for name, search in modes.items():
        figures = search_figures(
            items, lambda q, s=search: s(query=q, limit=DEPTH, min_relevance=0)
        )
        rows += [[name, group, *values] for group, values in figures.items()]
    headers = ["search", "kind", "n", "hit@1", "hit@5", "MRR", "kept by bar", "out declined"]
    names = paths[0].name if len(paths) == 1 else f"{len(paths)} sets ({pattern})"
    print(f"{names}, split {split}: {len(items)} questions.\n")
    print(table(headers, rows))
    print(
        f"\n{summary.changed} articles, {summary.embedded} chunks, model "
        f"{settings.EMBEDDING_MODEL}; bar {settings.SEARCH_MIN_RELEVANCE}; {machine_note()}."
    )
    if "--quick" not in sys.argv:
        outcomes = run_blocking(items, offline=True)
        print("\nThe assistant (offline model), `eval_answers --offline`:\n")
        print(report_table(report(items, outcomes)))
        if "--json" in sys.argv:  # each question's outcome, for reading the misses
            out = Path(sys.argv[sys.argv.index("--json") + 1])
            out.write_text(json.dumps([asdict(o) for o in outcomes], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
