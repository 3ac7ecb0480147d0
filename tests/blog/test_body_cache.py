"""An article page renders its Markdown once per body and renderer, not on every view
(blog.selectors.article_body_html), and never shows a body it no longer has."""

import contextlib
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

import blog.rendering
from blog import selectors, views
from blog.models import Article
from blog.rendering import RENDERER, renderer_fingerprint
from config.settings import CACHE_REDIS_SECONDS, redis_cache
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db

BODIES = {
    "en": ("## Mooring\n\nThe mast holds **fast**.", "The mast holds <strong>fast</strong>."),
    "zh": ("## 系留\n\n桅杆**牢牢**固定。", "桅杆<strong>牢牢</strong>固定。"),
}
EDITS = {
    "en": ("## Mooring\n\nThe mast let *go*.", "The mast let <em>go</em>."),
    "zh": ("## 系留\n\n桅杆*松开*了。", "桅杆<em>松开</em>了。"),
}
LOCMEM = "django.core.cache.backends.locmem.LocMemCache"


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    cache.clear()  # the test process's memory cache outlives a test
    yield
    cache.clear()


@pytest.fixture
def renders(monkeypatch) -> list[str]:
    """The bodies the renderer was asked for, wherever a page calls it from."""
    calls: list[str] = []
    real = blog.rendering.markdown_to_html

    def counted(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(selectors, "markdown_to_html", counted)
    monkeypatch.setattr(views, "markdown_to_html", counted)
    return calls


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_second_view_of_an_unchanged_article_does_not_render_it_again(
    client, make_article, renders, language
):
    body, shown = BODIES[language]
    make_article(title="Zeppelins", slug="zeppelins", body=body)

    pages = [client.get("/articles/zeppelins/").content.decode() for _ in range(3)]

    assert all(shown in page for page in pages)
    assert renders == [body]  # three views, one rendering (each view rendered it before)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_edit_shows_on_the_next_view_however_it_was_written(client, make_article, language):
    body, shown = BODIES[language]
    edited, edited_shown = EDITS[language]
    article = make_article(title="Zeppelins", slug="zeppelins", body=body)
    assert shown in client.get("/articles/zeppelins/").content.decode()

    article.body = edited
    article.save()  # as the admin saves it
    page = client.get("/articles/zeppelins/").content.decode()
    assert edited_shown in page and shown not in page

    # A write that leaves updated_at alone (a data migration, `manage.py shell`, SQL): a key of
    # id and date would serve the page before it.
    Article.objects.filter(pk=article.pk).update(body=body)
    page = client.get("/articles/zeppelins/").content.decode()
    assert shown in page and edited_shown not in page


def _worker(caches: dict) -> override_settings:
    """One daphne worker of a cluster: the same database, this cache."""
    return override_settings(CACHES={"default": caches})


@pytest.mark.parametrize("shared", ["redis", "per-process memory"])
def test_an_edit_in_one_worker_shows_in_every_other(make_article, request, shared):
    # `make run WORKERS=N` shares a Redis; a process on its own keeps its cache in memory. In
    # both, a worker that rendered the old body must not serve it after another one's save.
    if shared == "redis":
        location = request.getfixturevalue("redis_url")
        first = second = {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": location}  # fmt: skip
    else:
        first, second = ({"BACKEND": LOCMEM, "LOCATION": f"worker-{name}"} for name in "ab")
    body, shown = BODIES["en"]
    edited, edited_shown = EDITS["en"]
    article = make_article(title="Zeppelins", slug="zeppelins", body=body)
    reader = Client()
    with _worker(first):
        assert shown in reader.get("/articles/zeppelins/").content.decode()
    with _worker(second):
        assert shown in reader.get("/articles/zeppelins/").content.decode()
        article.body = edited
        article.save()

    with _worker(first):
        page = reader.get("/articles/zeppelins/").content.decode()
        cache.clear()
    with _worker(second):
        cache.clear()
    assert edited_shown in page and shown not in page


def test_a_drafts_rendered_body_is_still_not_shown_to_the_public(staff_client, make_article):
    # Only the body's HTML is cached, never the page: the visibility rules run on every view.
    make_article(title="Plans", slug="plans", body="Secret **plans**.", status="draft")
    staff = staff_client.get("/articles/plans/")
    assert "Secret <strong>plans</strong>" in staff.content.decode()
    assert "no-store" in staff["Cache-Control"] and "private" in staff["Cache-Control"]

    anonymous = Client().get("/articles/plans/")
    assert anonymous.status_code == 404 and "Secret" not in anonymous.content.decode()


def test_an_unpublished_article_leaves_the_public_site_at_once(client, make_article):
    article = make_article(title="Plans", slug="plans", body="Public **plans**.")
    assert "Public <strong>plans</strong>" in client.get("/articles/plans/").content.decode()

    article.status = Article.Status.DRAFT
    article.save()

    assert client.get("/articles/plans/").status_code == 404


def test_a_change_to_the_renderer_renders_every_article_afresh(client, make_article, monkeypatch):
    make_article(title="Links", slug="links", body="[home](https://example.com)")
    assert 'href="https://example.com"' in client.get("/articles/links/").content.decode()

    # A release whose renderer drops links: a new fingerprint, so the page follows the new rules.
    def stricter(text: str) -> str:
        return "<p>home</p>"

    monkeypatch.setattr(selectors, "RENDERER", "0123456789abcdef")
    monkeypatch.setattr(selectors, "markdown_to_html", stricter)
    page = client.get("/articles/links/").content.decode()
    assert "<p>home</p>" in page and "example.com" not in page


def test_the_fingerprint_follows_the_renderers_source_and_libraries():
    source = Path(blog.rendering.__file__).read_bytes()
    assert renderer_fingerprint(source=source) == RENDERER  # taken from the module as it runs

    stricter = source.replace(b"MAX_FILLED_CELLS = 4096", b"MAX_FILLED_CELLS = 1024")
    assert stricter != source
    assert renderer_fingerprint(source=stricter) != RENDERER
    assert renderer_fingerprint(source=source, packages=("nh3",)) != RENDERER


@contextmanager
def _redis_that_never_answers() -> Iterator[str]:
    """A port that takes connections (the kernel's backlog) and never says a word."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        yield f"redis://127.0.0.1:{silent.getsockname()[1]}/0"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the probe closes


def _alarm(signum, frame):
    raise TimeoutError("the page waited on the cache far past CACHE_REDIS_SECONDS")


@pytest.mark.parametrize("outage", ["refused", "hung"])
def test_pages_are_served_when_the_cache_is_down(client, make_article, outage):
    # The article pages worked without Redis before the cache; a Redis restart (connections
    # refused) or a Redis that hangs must not 500 them, nor hold them forever.
    make_article(title="Zeppelins", slug="zeppelins", body=BODIES["zh"][0])
    with contextlib.ExitStack() as stack:
        if outage == "hung":
            url = stack.enter_context(_redis_that_never_answers())
        else:
            url = f"redis://127.0.0.1:{_closed_port()}/0"
        stack.enter_context(_worker(redis_cache(url)))
        previous = signal.signal(signal.SIGALRM, _alarm)
        stack.callback(signal.signal, signal.SIGALRM, previous)
        signal.alarm(30)  # a generous bound, only so a regression fails instead of hanging
        stack.callback(signal.alarm, 0)
        response = client.get("/articles/zeppelins/")
        # redis-py waits 5 s for an answer by default; each view of a hung Redis paid that.
        connection = cache._cache.get_client().connection_pool.connection_kwargs
        bounds = connection["socket_timeout"], connection["socket_connect_timeout"]

    assert response.status_code == 200
    assert BODIES["zh"][1] in response.content.decode()
    assert bounds == (CACHE_REDIS_SECONDS, CACHE_REDIS_SECONDS)


PREVIEW = "/admin/blog/article/preview/"


def test_the_admin_preview_renders_what_was_typed_every_time(staff_client, make_article, renders):
    # An unsaved article has no id: a cache keyed by id would give every preview the first one's
    # body. A preview is rendered as typed and does not go into the cache.
    make_article(title="Zeppelins", slug="zeppelins", body=BODIES["en"][0])
    staff_client.get("/articles/zeppelins/")
    form = {"title": "Zeppelins", "slug": "", "summary": "", "tags": [], "status": "draft"}

    typed = [BODIES["en"][0], EDITS["en"][0], EDITS["zh"][0], EDITS["zh"][0]]
    pages = [staff_client.post(PREVIEW, {**form, "body": body}).content.decode() for body in typed]

    assert BODIES["en"][1] in pages[0] and EDITS["en"][1] in pages[1]
    assert EDITS["zh"][1] in pages[2] and EDITS["zh"][1] in pages[3]
    assert EDITS["en"][1] not in pages[2]
    assert renders == [BODIES["en"][0], *typed]  # the saved page once, then each preview
