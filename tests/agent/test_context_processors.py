"""The chat panel is on every page, in the browser's language, and the .mo is not stale."""

import ast
import gettext
import json
import re
from pathlib import Path

import pytest
from django.utils import translation

from agent.context_processors import chat_strings

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def panel_strings(html: str) -> dict:
    found = re.search(
        r'<script id="chat-strings" type="application/json">(.*?)</script>', html, re.S
    )
    assert found, "the page has no chat strings"
    return json.loads(found.group(1))


@pytest.mark.django_db
def test_every_page_carries_the_panel_and_its_script(client, make_article):
    make_article(title="Hello")

    for url in ["/", "/articles/hello/", "/no-such-page/"]:
        html = client.get(url).content.decode()

        assert 'id="chat-panel"' in html, url
        assert '<script type="module" src="/static/chat/panel.js"></script>' in html
        assert "/api/conversations/00000000-0000-0000-0000-000000000000" in html
        assert panel_strings(html)["search_running"] == "Searching the blog for “%(query)s”…"


@pytest.mark.django_db
def test_a_chinese_browser_gets_chinese_strings(client):
    html = client.get("/", headers={"accept-language": "zh-CN,zh;q=0.9"}).content.decode()

    assert '<html lang="zh-Hans">' in html
    assert "问问 Docent" in html
    assert panel_strings(html)["search_running"] == "正在博客中搜索“%(query)s”…"
    # One word for the conversation: "打开对话", "开始新的对话", and "关闭对话" (was "关闭聊天").
    assert 'aria-label="关闭对话"' in html and "聊天" not in html


@pytest.mark.django_db
def test_error_codes_reach_the_page_from_agent_events(client):
    from agent import events

    html = client.get("/").content.decode()
    found = re.search(r'<script id="chat-config" type="application/json">(.*?)</script>', html)
    config = json.loads(found.group(1))

    assert config["codes"] == sorted(events.ERROR_CODES)
    assert config["retryable"] == sorted(events.RETRYABLE)
    assert config["maxChars"] == 4000
    # Every code the server can send has words for the visitor, in both languages.
    for language in ("en", "zh-hans"):
        with translation.override(language):
            strings = chat_strings()
        # A message with a count has its two plural forms instead ("error_rate_limited_one").
        worded = {key.removesuffix("_one").removesuffix("_other") for key in strings}
        assert [code for code in events.ERROR_CODES if f"error_{code}" not in worded] == []


def test_no_hand_kept_list_of_error_codes_in_the_panel():
    static = Path(__file__).resolve().parents[2] / "static" / "chat"
    for script in static.glob("*.js"):
        text = script.read_text()
        assert "max_steps: 1" not in text and "KEEP_QUESTION" not in text


def test_every_chat_string_is_translated_with_the_same_placeholders():
    with translation.override("en"):
        english = chat_strings()
    with translation.override("zh-hans"):
        chinese = chat_strings()

    untranslated = [key for key in english if chinese[key] == english[key]]
    assert untranslated == []
    for key, text in english.items():
        assert sorted(PLACEHOLDER.findall(chinese[key])) == sorted(PLACEHOLDER.findall(text)), key


def test_the_compiled_catalog_matches_the_po_file():
    """The .mo is committed so a clone works without gettext; it must not go stale."""
    with (LOCALE / "django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)

    for context, msgid, msgstr in _po_entries(LOCALE / "django.po"):
        found = compiled.pgettext(context, msgid) if context else compiled.gettext(msgid)
        assert found == msgstr, f"recompile the .mo: {msgid!r}"


def _po_entries(path: Path) -> list[tuple[str, str, str]]:
    """(msgctxt or "", msgid, msgstr) of the translated singular entries of a .po file."""
    entries, field, current = [], None, {}
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        keyword = re.match(
            r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[0\])?|msgstr\[\d+\]) (".*")$', line
        )
        if keyword:
            field = keyword.group(1)
            current[field] = ast.literal_eval(keyword.group(2))
        elif line.startswith('"') and field:
            current[field] += ast.literal_eval(line)
        elif not line.strip() and current:
            if current.get("msgid") and "msgid_plural" not in current and current.get("msgstr"):
                entries.append((current.get("msgctxt", ""), current["msgid"], current["msgstr"]))
            current, field = {}, None
    return entries


@pytest.mark.django_db
def test_the_panel_says_indexing_is_still_running_until_every_article_is_indexed(
    client, make_article
):
    from django.utils import timezone

    from blog.models import Article

    indexed = make_article(title="Indexed")
    Article.objects.filter(pk=indexed.pk).update(indexed_at=timezone.now(), index_hash="h")
    article = make_article(title="Fresh")
    Article.objects.filter(pk=article.pk).update(indexed_at=None, index_hash="")
    make_article(title="Draft", status=Article.Status.DRAFT)  # drafts are never indexed

    html = client.get("/").content.decode()
    assert 'id="chat-indexing"' in html and "1 article isn’t searchable yet" in html

    Article.objects.filter(pk=article.pk).update(indexed_at=timezone.now(), index_hash="h")
    assert 'id="chat-indexing"' not in client.get("/").content.decode()
    Article.objects.filter(pk=article.pk).update(updated_at=timezone.now())  # edited since
    assert 'id="chat-indexing"' in client.get("/").content.decode()


def test_the_screen_reader_label_of_a_question_has_the_colon_of_its_language():
    # The panel added an ASCII ": " after "你的问题".
    with translation.override("zh-hans"):
        assert chat_strings()["you_asked"] == "你的问题："
    turn_js = (Path(__file__).resolve().parents[2] / "static" / "chat" / "turn.js").read_text()
    assert "${S.you_asked}:" not in turn_js


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "words"),
    [("en", "no article is searchable yet"), ("zh-hans", "还没有可搜索的文章")],
)
def test_on_a_first_run_the_panel_says_nothing_is_searchable_yet(
    client, make_article, language, words
):
    # Before the first article is indexed, "answers come from what is indexed so far" promised
    # answers from nothing: every question was declined.
    from blog.models import Article

    article = make_article(title="Fresh")
    Article.objects.filter(pk=article.pk).update(indexed_at=None, index_hash="")

    html = client.get("/", headers={"accept-language": language}).content.decode()
    notice = html.split('id="chat-indexing"')[1].split("</")[0]
    assert words in notice
    assert "answers come from what is indexed" not in notice and "回答只来自已索引" not in notice
