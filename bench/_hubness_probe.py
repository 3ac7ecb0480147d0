"""Would a hubness correction put the right article first for cross-language questions?

    python bench/_hubness_probe.py [--split tune|test]

One English passage of the demo blog (in "Anatomy of the agent loop") sits close to almost
every Chinese question, in scope or not: e5-small's cross-language "hub". Cross-domain
similarity local scaling (CSLS, Conneau et al. 2018) subtracts from a pair's cosine how close
the passage is to everything in the question's language. This probe measures three ways to
estimate that closeness, on every eval file's questions of the split, without changing the
search: it re-scores each candidate article with the corrected similarity through
blog.relevance and counts the right article first (and above the bar) and the out-of-scope
questions declined.

- `chunks`: mean of the passage's K best cosines to the other language's passages (K=5);
- `generic`: mean cosine to six content-free questions in the question's language
  ("为什么会这样？"), i.e. to what a question in that language looks like;
- `outliers`: `generic`, but only the part beyond the mean + 2 standard deviations.

Each is scaled by `beta` and centred on its language's mean, so a typical passage keeps its
similarity. Measured 2026-12-03; docs/retrieval.md has the table ("hubness"). Not kept.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, reindex_signals_off, table  # noqa: E402

BENCH = Path(__file__).resolve().parent
GENERIC = {
    "zh": ["这是怎么回事？", "应该怎么做？", "为什么会这样？", "有什么区别？", "这个怎么处理？"],
    "en": [
        "What is this about?",
        "How should I do it?",
        "Why does this happen?",
        "What is the difference?",
        "How is this handled?",
    ],
}


def _unit(rows: list) -> np.ndarray:
    matrix = np.array(rows, dtype=float)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _hubness(kind: str, chunks: np.ndarray, langs: np.ndarray, embed) -> dict[str, np.ndarray]:
    """Per question language, how close each passage is to that language (before centring)."""
    if kind == "chunks":
        sims = chunks @ chunks.T
        return {
            lang: np.sort(sims[:, langs == lang], axis=1)[:, -5:].mean(axis=1)
            for lang in ("en", "zh")
        }
    return {
        lang: (chunks @ _unit([embed(text) for text in texts]).T).mean(axis=1)
        for lang, texts in GENERIC.items()
    }


def _correction(hub: np.ndarray, langs: np.ndarray, beta: float, outliers: bool) -> np.ndarray:
    out = np.zeros_like(hub)
    for lang in ("en", "zh"):
        mine = langs == lang
        mean, spread = hub[mine].mean(), hub[mine].std()
        excess = hub[mine] - mean
        out[mine] = np.maximum(0.0, excess - 2 * spread) if outliers else beta * excess
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="tune", choices=["tune", "test"])
    args = parser.parse_args()
    django_start()
    from agent.evaluation import items_load, items_select
    from blog.embeddings import embedder_get
    from blog.indexing import articles_reindex
    from blog.models import Chunk
    from blog.relevance import Evidence, query_language, relevance
    from blog.search import article_search
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
    articles_reindex()
    embedder = embedder_get()
    rows = list(Chunk.objects.values_list("article__slug", "language", "embedding"))
    slugs = np.array([row[0] for row in rows])
    langs = np.array([row[1] for row in rows])
    chunks = _unit([row[2] for row in rows])
    items = [
        item
        for path in sorted(BENCH.glob("answer_eval*.jsonl"))
        for item in items_select(items_load(path), args.split)
    ]
    asked = []
    for item in items:
        query = " ".join(item.turns)
        hits = {
            h.url.strip("/").split("/")[-1]: h
            for h in article_search(query=query, limit=14, min_relevance=0)
        }
        asked.append((item, query_language(query), _unit([embedder.embed_query(query)])[0], hits))
    variants = [("none", "generic", 0.0, False)]
    variants += [(f"chunks β={b}", "chunks", b, False) for b in (0.5, 1.0)]
    variants += [(f"generic β={b}", "generic", b, False) for b in (0.5, 1.0)]
    variants += [("outliers", "generic", 1.0, True)]
    hubs = {
        kind: _hubness(kind, chunks, langs, embedder.embed_query) for kind in ("chunks", "generic")
    }
    lines = []
    for name, kind, beta, outliers in variants:
        cross_right = right = declined = crosses = answerable = outs = 0
        for item, qlang, vector, hits in asked:
            corrected = vector @ chunks.T - _correction(hubs[kind][qlang], langs, beta, outliers)
            scored = []
            for slug, hit in hits.items():
                best = float(corrected[slugs == slug].max())
                cross = hit.language != qlang
                similarity = best if cross else hit.similarity  # only cross pairs corrected
                evidence = Evidence(
                    similarity=similarity,
                    coverage=hit.coverage,
                    known=hit.known,
                    cross=cross,
                    margin=hit.margin,
                    question_language=qlang,
                )
                scored.append((relevance(evidence), slug))
            top_relevance, top = max(scored)
            if not item.in_scope:
                outs += 1
                declined += top_relevance < 0.5
                continue
            answerable += 1
            ok = top in item.expected and top_relevance >= 0.5
            right += ok
            if item.kind == "cross":
                crosses += 1
                cross_right += ok
        lines.append(
            [name, f"{cross_right}/{crosses}", f"{right}/{answerable}", f"{declined}/{outs}"]
        )
    print(f"split {args.split}: right article first and above the bar; out-of-scope declined")
    print(table(["correction", "cross right first", "all right first", "out declined"], lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
