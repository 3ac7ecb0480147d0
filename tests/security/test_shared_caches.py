"""Pages a shared cache (a CDN, a caching proxy) must not keep, or must keep apart.

A staff user's preview of a draft came back with no Cache-Control at all: the same URL is a 404
for everyone else, and a cache that stored the preview served the unpublished text to them.
And a page in the language a `django_language` cookie chose varied on Accept-Language alone: one
request with the cookie (and any well-formed session key) made a Chinese page that a cache
would store for every English reader.
"""

import httpx
import pytest
from django.contrib.auth import get_user_model

from blog.models import Article
from tests.security.clients import admin_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a-long-staff-password-42"  # noqa: S105 - a test account


def signed_in(server) -> httpx.Client:
    get_user_model().objects.create_user("author", password=PASSWORD, is_staff=True)
    return admin_signed_in(server, username="author", password=PASSWORD)


def cache_control(response: httpx.Response) -> set[str]:
    return {part.strip() for part in response.headers.get("Cache-Control", "").split(",")}


def test_a_drafts_preview_is_kept_by_no_shared_cache(serve, make_article):
    make_article(title="Unreleased plan", slug="unreleased", status=Article.Status.DRAFT)
    make_article(title="Public post", slug="public-post")
    server = serve("cache-draft")

    author = signed_in(server)
    preview = author.get("/articles/unreleased/")
    public = author.get("/articles/public-post/")
    author.close()
    stranger = httpx.get(server.url + "/articles/unreleased/")

    assert preview.status_code == 200 and "Unreleased plan" in preview.text
    assert {"private", "no-store"} <= cache_control(preview)
    assert stranger.status_code == 404
    assert "no-store" not in cache_control(public)  # published pages stay cacheable


def test_a_page_in_the_language_of_a_sent_cookie_is_kept_apart_by_caches(serve, make_article):
    make_article(title="Public post", slug="public-post")
    server = serve("cache-language")
    visitor = {"sessionid": "a" * 32}  # well-formed, so the page mints no key of its own
    english = {"Accept-Language": "en"}

    for path in ("/", "/articles/public-post/"):
        plain = httpx.get(server.url + path, headers=english, cookies=visitor)
        chosen = httpx.get(
            server.url + path, headers=english, cookies={**visitor, "django_language": "zh-hans"}
        )

        assert 'lang="en"' in plain.text and 'lang="zh-Hans"' in chosen.text
        assert "cookie" in chosen.headers.get("Vary", "").lower()
