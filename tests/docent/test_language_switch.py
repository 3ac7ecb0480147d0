"""The header's English/中文 switch: a plain form to Django's set_language, no JavaScript."""

import json
import re

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db

SWITCH = "/i18n/setlang/"


def button(attributes: str, label: str, html: str) -> bool:
    """The switch's button with exactly these attributes and this label (after its globe icon,
    which a narrow header shows beside the lone button)."""
    icon = r"(?:<svg[^>]*>.*?</svg>)?"
    return bool(re.search(rf"<button [^>]*{re.escape(attributes)}>{icon}{re.escape(label)}<", html))


def chat_strings(html: str) -> dict:
    found = re.search(r'<script id="chat-strings" type="application/json">(.*?)</script>', html)
    return json.loads(found.group(1))


def test_every_page_has_the_switch_with_the_current_language_marked(client, make_article):
    make_article(title="Public post", slug="public-post")

    for path in ("/", "/articles/public-post/", "/no-such-page/"):
        html = client.get(path, headers={"accept-language": "en"}).content.decode()

        assert f'action="{SWITCH}" method="post"' in html, path
        assert '<input type="hidden" name="next" value="' + path + '">' in html, path
        assert button('value="en" lang="en" aria-current="true"', "English", html), path
        assert button('value="zh-hans" lang="zh-Hans"', "中文", html), path


def test_choosing_chinese_switches_the_page_and_the_chat_panel_and_is_remembered(make_article):
    make_article(title="Public post", slug="public-post")
    # A browser without JavaScript posts the form as it is: no CSRF token on the page.
    visitor = Client(enforce_csrf_checks=True, headers={"accept-language": "en"})

    response = visitor.post(SWITCH, {"language": "zh-hans", "next": "/articles/public-post/"})

    assert response.status_code == 302 and response["Location"] == "/articles/public-post/"
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie.value == "zh-hans"
    assert cookie["max-age"] == 365 * 24 * 3600  # not only for this browser session
    assert cookie["samesite"] == "Lax" and cookie["httponly"]
    html = visitor.get("/articles/public-post/").content.decode()
    assert '<header class="site-header" lang="zh-Hans">' in html  # <html> has the article's
    assert button('value="zh-hans" lang="zh-Hans" aria-current="true"', "中文", html)
    assert chat_strings(html)["thinking"] == "正在思考…"
    assert 'aria-label="语言"' in html

    visitor.post(SWITCH, {"language": "en", "next": "/"})
    html = visitor.get("/", headers={"accept-language": "zh-CN"}).content.decode()
    assert '<html lang="en">' in html  # the choice outranks the browser's language
    assert chat_strings(html)["thinking"] == "Thinking…"


def test_a_cross_site_post_is_refused_and_a_foreign_next_goes_home(client):
    foreign = client.post(
        SWITCH, {"language": "zh-hans", "next": "/"}, headers={"origin": "https://evil.example"}
    )
    own = client.post(
        SWITCH,
        {"language": "zh-hans", "next": "https://evil.example/"},
        headers={"origin": "http://testserver"},
    )

    assert foreign.status_code == 403
    assert settings.LANGUAGE_COOKIE_NAME not in foreign.cookies
    assert own.status_code == 302 and own["Location"] == "/"
    assert own.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"


def test_a_taiwan_browser_gets_the_site_and_the_panel_in_traditional(client, make_article):
    # Django picked the nearest language the site had, zh-hans: the placeholder, the steps
    # and the buttons reached a reader in Taipei in Simplified.
    make_article(title="Public post", slug="public-post")

    html = client.get("/articles/public-post/", headers={"accept-language": "zh-TW,zh;q=0.9"})
    html = html.content.decode()

    assert '<header class="site-header" lang="zh-Hant">' in html
    assert button('value="zh-hant" lang="zh-Hant" aria-current="true"', "中文", html)
    strings = chat_strings(html)
    assert strings["sources"] == "來源"
    assert strings["placeholder_article"] == "就這篇文章提問…"
    assert 'aria-label="語言"' in html


@pytest.mark.parametrize(
    ("accept", "chinese"),
    [("zh-TW,zh;q=0.9,en;q=0.8", "zh-hant"), ("zh-HK", "zh-hant"),
     ("zh-CN,zh;q=0.9", "zh-hans"), ("en-US,en;q=0.9", "zh-hans")],
)  # fmt: skip
def test_on_an_english_page_the_switch_offers_the_browsers_own_chinese(
    make_article, accept, chinese
):
    make_article(title="Public post", slug="public-post")
    visitor = Client(headers={"accept-language": accept})
    visitor.post(SWITCH, {"language": "en", "next": "/"})

    html = visitor.get("/articles/public-post/").content.decode()

    assert button('value="en" lang="en" aria-current="true"', "English", html)
    assert button(f'value="{chinese}" lang="{chinese[:3]}{chinese[3:].title()}"', "中文", html)
