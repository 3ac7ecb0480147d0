"""An error no view handled, with DEBUG off: the site's own 500 page, in the reader's language,
not Django's bare "Server Error (500)"."""

import pytest
from django.test import Client
from django.urls import path

from config import urls as project

pytestmark = pytest.mark.django_db


def _broken(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [path("broken/", _broken), *project.urlpatterns]
handler404 = project.handler404
handler400 = project.handler400
# The project's handler, or Django's default when the project names none.
handler500 = getattr(project, "handler500", "django.views.defaults.server_error")


@pytest.fixture
def broken_site(settings) -> Client:
    settings.DEBUG = False
    settings.ROOT_URLCONF = __name__
    return Client(raise_request_exception=False)


@pytest.mark.parametrize(
    ("language", "heading"),
    [("en", "Something went wrong on our side"), ("zh-hans", "我们这边出了点问题")],
)
def test_an_unhandled_error_shows_the_sites_page_in_the_readers_language(
    broken_site, language, heading
):
    response = broken_site.get("/broken/", HTTP_ACCEPT_LANGUAGE=language)

    assert response.status_code == 500
    html = response.content.decode()
    assert heading in html
    assert 'href="/"' in html  # a way back to the articles
    assert "RuntimeError" not in html and "a bug in a view" not in html
    assert response["Cache-Control"] == "no-store"


def test_a_page_that_cannot_render_falls_back_to_plain_words(broken_site, settings):
    # The error page must not raise in turn: with its template gone, the plain words answer.
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [], "APP_DIRS": False}]

    response = broken_site.get("/broken/")

    assert response.status_code == 500
    assert response.content.decode() == "Something went wrong on our side. Please try again."


@pytest.mark.parametrize(
    ("language", "heading"),
    [("en", "The request could not be read"), ("zh-hans", "这个请求无法读取")],
)
def test_a_host_the_site_does_not_serve_gets_the_sites_400_page(broken_site, language, heading):
    # Django's own answer was the bare words "Bad Request (400)", in English only.
    response = broken_site.get("/", HTTP_HOST="[::1", HTTP_ACCEPT_LANGUAGE=language)

    assert response.status_code == 400
    html = response.content.decode()
    assert heading in html and 'href="/"' in html
    assert "[::1" not in html  # the refused Host is not written back
    assert response["Cache-Control"] == "no-store"


def test_a_400_page_that_cannot_render_falls_back_to_plain_words(broken_site, settings):
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [], "APP_DIRS": False}]

    response = broken_site.get("/", HTTP_HOST="[::1")

    assert response.status_code == 400
    assert response.content.decode() == "The request could not be read."


@pytest.mark.parametrize(
    ("language", "heading"),
    [
        ("en", "The request could not be read"),
        ("zh-hans", "这个请求无法读取"),
        ("zh-tw", "這個請求無法讀取"),
    ],
)
@pytest.mark.parametrize("address", ["/articles/%00/", "/?q=a%00b"])
def test_a_url_holding_a_nul_gets_the_sites_400_page_in_the_readers_language(
    client, language, heading, address
):
    # The guard refusing it runs before the language is chosen: the reader got the English
    # plain text "The URL contains a NUL or an invalid character." and no way back.
    response = client.get(address, HTTP_ACCEPT_LANGUAGE=language)

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert heading in html and 'href="/"' in html
    assert "\x00" not in html
    assert "Accept-Language" in response["Vary"]


def test_an_api_url_holding_a_nul_still_gets_json(client):
    response = client.get("/api/articles/%00", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert response.status_code == 400
    assert response.json()["code"] == "bad_request"


def test_a_query_past_the_field_limit_gets_the_400_page_not_a_500(client, settings):
    # Its refusal, made a coroutine with the NUL page, was returned un-awaited: a 500.
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    query = "&".join(f"f{n}=1" for n in range(11))

    response = client.get(f"/?{query}", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert response.status_code == 400
    assert "这个请求无法读取" in response.content.decode()
