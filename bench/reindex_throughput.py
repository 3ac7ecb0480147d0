"""Reindex throughput with the local backend, and the cost of a reindex that changes nothing.

    python bench/reindex_throughput.py [--articles 1000] [--quick]

1. The 14 demo articles, indexed from scratch with the bundled multilingual-e5-small
   (`articles_reindex`, what `manage.py reindex` runs): chunks embedded per second.
2. One paragraph of one article edited, then reindexed: only that chunk is embedded.
3. 1,000 more articles (bodies stitched from the demo sections, about 7 chunks each).
   They are indexed by a stand-in embedder that has the local model's name and width but
   returns random vectors, only to keep this bench short: the no-op path never looks at
   the vectors, just at the content hashes. Then `manage.py reindex` runs with the real
   local backend and its embedding calls are counted (goal: under 2 s, zero calls).
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, machine_note, reindex_signals_off, table  # noqa: E402


class StandIn:
    """The local model's name and width, random unit vectors, no model run."""

    def __init__(self, model_name: str, dimensions: int) -> None:
        self.model_name, self.dimensions = model_name, dimensions
        self.calls = self.texts = 0
        self.rng = np.random.default_rng(0)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        vectors = self.rng.normal(size=(len(texts), self.dimensions))
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("not used")


def stitched_articles(n: int) -> list:
    """`n` unsaved published articles made of random demo sections."""
    from blog.models import Article

    sections = [
        "## " + part
        for article in Article.objects.all()
        for part in article.body.split("\n## ")[1:]
    ]
    rng = random.Random(1)
    return [
        Article(
            title=f"Stitched article {i}",
            slug=f"stitched-{i}",
            summary="Sections from the demo articles, recombined for the benchmark.",
            body="\n\n".join(rng.sample(sections, 6)),
            status=Article.Status.PUBLISHED,
            published_at="2026-01-01T00:00:00Z",
        )
        for i in range(n)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 extra articles")
    args, _ = parser.parse_known_args()  # run_all.py passes its own flags to every bench
    if args.quick:
        args.articles = 200
    django_start()
    from django.core.management import call_command

    from blog.embeddings import embedder_get
    from blog.indexing import articles_reindex
    from blog.models import Article, Chunk
    from blog.services import demo_articles_load

    local = embedder_get()
    with reindex_signals_off():
        demo_articles_load()
    local.embed_query("warm up")  # load the model outside the timing
    full = articles_reindex()
    demo = Article.objects.get(slug="pgvector-and-hnsw")
    demo.body = demo.body.replace("You do not need", "You rarely need", 1)
    with reindex_signals_off():
        demo.save()
    edit = articles_reindex()

    with reindex_signals_off():
        Article.objects.bulk_create(stitched_articles(args.articles))
    setup = articles_reindex(embedder=StandIn(local.model_name, local.dimensions))
    calls_before = local.calls
    out = io.StringIO()
    started = time.perf_counter()
    call_command("reindex", stdout=out, stderr=io.StringIO())
    noop_seconds = time.perf_counter() - started
    noop_calls = local.calls - calls_before
    total = Article.objects.count()

    rows = [
        [
            f"demo corpus from scratch ({full.changed} articles)",
            full.embedded,
            f"{full.seconds:.1f} s",
            f"{full.embedded / full.seconds:.1f} chunks/s",
        ],
        ["one paragraph edited", edit.embedded, f"{edit.seconds:.2f} s", f"{edit.changed} changed"],
        [
            f"no-op `manage.py reindex`, {total:,} unchanged articles",
            noop_calls,
            f"{noop_seconds:.2f} s",
            "goal < 2 s, 0 embedding calls",
        ],
    ]
    print(table(["run", "chunks embedded", "time", "rate / note"], rows))
    print(
        f"\n{Chunk.objects.count():,} chunks in the index ({setup.embedded:,} from the stand-in). "
        f"Command said: {out.getvalue().strip()} {machine_note()}."
    )
    return 0 if noop_calls == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
