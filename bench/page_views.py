"""Article page views per second: the body's HTML from the cache against rendered on every view.

    .venv/bin/python bench/page_views.py            # 600 demo views, 12 large views per variant
    .venv/bin/python bench/page_views.py --quick    # 120 and 4

Each view is a GET of /articles/<slug>/ through Django's test client (URL routing, middleware,
the selector's two queries, the template), DEBUG off as in production, on a private PostgreSQL.
Variants, interleaved in rounds so that all of them see the same machine:

- rendered every view: main's view, `markdown_to_html(article.body)` on each request;
- cached in memory: `blog.selectors.article_body_html` on the default cache (one process's memory,
  `make run` without REDIS_URL);
- cached in Redis: the same on a real redis-server on loopback, as `make run WORKERS=N` runs it.

Two kinds of page: the 14 demo articles in turn (2 to 7 kB of Markdown each) and one large
article (about 60 kB: a 300-row table, wide tables of empty cells, nested lists), each viewed
once per variant before the clock starts. The cold row is what the first view of a large article
costs after an edit or a release. CPU is this process's (client and Django); PostgreSQL's and
Redis's are not counted.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import django_start, machine_note, percentile, reindex_signals_off, table  # noqa: E402

LARGE_SLUG = "a-large-article"


def large_body() -> str:
    """About 60 kB of Markdown that is costly to render and within the renderer's caps."""
    columns = 12
    head = "| " + " | ".join(f"列 {n}" for n in range(columns)) + " |\n"
    rows = "".join(
        "| " + " | ".join(f"*v{row}.{n}*" for n in range(columns)) + " |\n" for row in range(300)
    )
    empty = "|" + "a|" * 256 + "\n|" + "-|" * 256 + "\n" + "|\n" * 255 + "\n"
    nested = "\n".join("  " * depth + f"- level {depth}: 向量 and `code`" for depth in range(8))
    table_md = head + "|" + "---|" * columns + "\n" + rows
    return "# A large article\n\n" + table_md + "\n" + empty * 4 + (nested + "\n\n") * 45


def articles_load() -> list[str]:
    """The demo articles and the large one, published; their slugs (the large one last)."""
    from blog.models import Article
    from blog.services import demo_articles_load

    with reindex_signals_off():
        demo_articles_load()
        Article.objects.create(
            title="A large article", slug=LARGE_SLUG, body=large_body(), status="published"
        )
    return list(Article.objects.order_by("slug").values_list("slug", flat=True))


@contextmanager
def redis_server() -> Iterator[str | None]:
    """A throwaway redis-server on a free loopback port; None when it is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="body-bench-redis-") as data, socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", data, "--save", ""]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            server.terminate()
            server.wait()


@contextmanager
def variant(name: str, redis_url: str | None) -> Iterator[None]:
    """The view as main had it, or the cached one on memory or on Redis."""
    from django.core.cache import cache
    from django.test.utils import override_settings

    from blog import selectors
    from blog.rendering import markdown_to_html

    if name == "rendered every view":
        cached = selectors.article_body_html
        selectors.article_body_html = lambda *, article: markdown_to_html(article.body)
        try:
            yield
        finally:
            selectors.article_body_html = cached
        return
    caches = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    if name == "cached in Redis":
        caches = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    with override_settings(CACHES={"default": caches}):
        yield
        if name == "cached in Redis":
            cache.close()


def views(client, slugs: list[str], count: int) -> tuple[list[float], float]:
    """`count` views cycling through `slugs`: each view's seconds, and the CPU seconds of all."""
    seconds, cpu = [], time.process_time()
    for index in range(count):
        started = time.perf_counter()
        response = client.get(f"/articles/{slugs[index % len(slugs)]}/")
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    return seconds, time.process_time() - cpu


def measure(names: list[str], redis_url: str | None, plan: dict, rounds: int) -> dict:
    """Interleaved rounds of each variant on each page; the samples per (page, variant)."""
    from django.core.cache import cache
    from django.test import Client

    client = Client()
    samples: dict = {(page, name): ([], 0.0) for page in plan for name in names}
    cold: dict[str, float] = {}
    for name in names:
        with variant(name, redis_url):
            cache.clear()
            started = time.perf_counter()
            views(client, plan["large article (60 kB)"][0], 1)  # fills the cache
            cold[name] = time.perf_counter() - started
            views(client, plan["demo articles (2-7 kB)"][0], 14)
    for _ in range(rounds):
        for page, (slugs, count) in plan.items():
            for name in names:
                with variant(name, redis_url):
                    seconds, cpu = views(client, slugs, max(1, count // rounds))
                done, spent = samples[(page, name)]
                samples[(page, name)] = (done + seconds, spent + cpu)
    return {"samples": samples, "cold": cold}


def report(names: list[str], result: dict, plan: dict) -> None:
    rows = []
    for page in plan:
        base_seconds, base_cpu = result["samples"][(page, names[0])]
        base_rate = len(base_seconds) / sum(base_seconds)
        for name in names:
            seconds, cpu = result["samples"][(page, name)]
            rate = len(seconds) / sum(seconds)
            rows.append(
                [
                    page,
                    name,
                    len(seconds),
                    f"{rate:.1f}",
                    f"{rate / base_rate:.2f}x",
                    f"{percentile(seconds, 50) * 1000:.2f}",
                    f"{percentile(seconds, 95) * 1000:.2f}",
                    f"{cpu / len(seconds) * 1000:.2f}",
                    f"{(cpu / len(seconds)) / (base_cpu / len(base_seconds)):.3f}x",
                ]
            )
    head = ["page", "variant", "views", "views/s", "vs rendered", "p50 ms", "p95 ms",
            "CPU ms/view", "CPU vs rendered"]  # fmt: skip
    print(table(head, rows))
    cold = ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in result["cold"].items())
    print(f"\nFirst view of the large article (cold cache): {cold}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    demo_views, large_views = (120, 4) if args.quick else (600, 12)
    # DEBUG off, as served in production (DEBUG keeps every query in memory).
    os.environ.update(
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(48),
        DJANGO_ALLOWED_HOSTS="testserver",
        DJANGO_SECURE_SSL_REDIRECT="false",
    )
    django_start()
    slugs = articles_load()
    plan = {
        "demo articles (2-7 kB)": ([slug for slug in slugs if slug != LARGE_SLUG], demo_views),
        "large article (60 kB)": ([LARGE_SLUG], large_views),
    }
    with redis_server() as redis_url:
        names = ["rendered every view", "cached in memory"]
        names += ["cached in Redis"] if redis_url else []
        result = measure(names, redis_url, plan, min(args.rounds, large_views))
    report(names, result, plan)
    from blog.models import Article

    size = len(Article.objects.get(slug=LARGE_SLUG).body.encode())
    print(f"Large article: {size / 1000:.1f} kB of Markdown. {machine_note()}.")
    if not redis_url:
        print("redis-server is not installed: no Redis row.")


if __name__ == "__main__":
    main()
