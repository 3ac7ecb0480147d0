"""The twelfth first-run walk (panel and admin; phone and desktop, English and Chinese): what it
found, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_answer_shapes import chunks
from tests.e2e.test_chat_panel import ask, wait_answered
from tests.e2e.test_rough_edges import open_chat, reviewer, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

# Phones on their side: beside the page (the card), and narrower than a column and the card
# together (the sheet).
LANDSCAPES = {"card": {"width": 844, "height": 390}, "sheet": {"width": 667, "height": 375}}
DESKTOP = {"width": 1280, "height": 800}

ANSWER = "HNSW builds a layered graph. " * 30
# The conversation's share of the panel: the log's height over the panel's.
LOG_SHARE = """() => document.querySelector('#chat-log').clientHeight
  / document.querySelector('#chat-panel').clientHeight"""


@pytest.mark.parametrize("shape", LANDSCAPES)
@pytest.mark.parametrize(("locale", "question"), [("en-US", "How does HNSW work?"),
                                                  ("zh-CN", "HNSW 怎么用？")])  # fmt: skip
def test_on_a_phone_on_its_side_the_conversation_keeps_most_of_the_panel(
    site, scripted, open_page, locale, question, shape
):
    # At 844 x 390 the header, the badge, the composer and its keyboard hint left the answer
    # 136 of the card's 348 px (39 %); a long question grew the composer to leave it 26 px,
    # and 73 of the sheet's 375 at 667 x 375.
    scripted.enqueue(text_response(chunks(ANSWER, 80)))
    viewport = LANDSCAPES[shape]
    page = open_page(viewport, locale=locale, is_mobile=True, has_touch=True)
    page.goto(site + "/")
    open_chat(page)
    ask(page, question)
    wait_answered(page)
    answered = page.evaluate(LOG_SHARE)
    screenshot(page, f"twelfth-landscape-{shape}-{locale}")
    page.locator("#chat-input").fill("a long question " * 40)
    typing = page.evaluate(LOG_SHARE)
    screenshot(page, f"twelfth-landscape-{shape}-typing-{locale}")

    # Before: 0.49-0.53 answered on the card, 0.29-0.33 typing on the sheet (0.39 and 0.07 on
    # the offline demo's card, whose quote-mode badge takes two more lines).
    assert answered >= 0.55, answered
    assert typing >= 0.45, typing
    expect(page.locator("#chat-hint")).to_be_hidden()
    panel = page.locator("#chat-panel").bounding_box()
    assert panel["y"] >= 0 and panel["y"] + panel["height"] <= viewport["height"]


def test_a_desktop_window_keeps_the_keyboard_hint(site, open_page):
    page = open_page(DESKTOP)
    page.goto(site + "/")
    open_chat(page)
    expect(page.locator("#chat-hint")).to_be_visible()


@pytest.mark.parametrize(
    ("locale", "names"),
    [("en-US", ("Copy the answer", "Copy the code", "Copied")),
     ("zh-CN", ("复制回答", "复制代码", "已复制"))],
)  # fmt: skip
def test_each_copy_button_is_named_for_what_it_copies(site, scripted, open_page, locale, names):
    # Two answers with code gave a screen reader's list of buttons "Copy" four times over.
    answer_name, code_name, copied = names
    answer = "Set it:\n\n```sh\nAGENT_MAX_STEPS=5\n```\n\nThen restart."
    scripted.enqueue(text_response(chunks(answer, 20)))
    page = open_page(locale=locale)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(site + "/")
    open_chat(page)
    ask(page, "How do I set it?")
    wait_answered(page)

    expect(page.get_by_role("button", name=answer_name, exact=True)).to_have_count(1)
    code = page.get_by_role("button", name=code_name, exact=True)
    expect(code).to_have_count(1)
    code.click()
    expect(page.locator(".chat-copy--code")).to_have_accessible_name(copied)
    expect(page.locator(".chat-copy--code")).to_have_accessible_name(code_name)  # then back
    screenshot(page, f"twelfth-copy-{locale}")


ZH_BODY = """## 索引参数

| 参数 | 默认值 | 含义 |
| --- | --- | --- |
| `m` | 16 | 每个节点的邻居数 |
| `ef_construction` | 64 | 建索引时的候选列表长度 |

```sql
CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops);
```
"""


def test_the_preview_of_a_chinese_article_offers_no_switch_into_an_error(
    site,
    open_page,
    reviewer,  # noqa: F811
):
    # In the preview's tab the site header's "English" led to a bare "HTTP ERROR 405": the
    # switch reloads its page's address, and the preview's answers only the posted form.
    page = open_page(locale="zh-CN")
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/blog/article/add/")
    page.fill("#id_title", "HNSW 参数调优")
    page.fill("#id_body", ZH_BODY)
    with page.context.expect_page() as opened:
        page.locator(".dc-preview-button").click()
    preview = opened.value
    preview.wait_for_load_state()

    expect(preview.locator("article table td code").first).to_have_text("m")
    expect(preview.locator("article pre code")).to_contain_text("CREATE INDEX")
    expect(preview.locator(".site-header")).to_be_visible()
    expect(preview.locator(".lang-switch")).to_have_count(0)
    screenshot(preview, "twelfth-preview-zh")
