"""Answers shaped to break the panel: a model (or an article injecting into it) controls them.

`static/chat/markdown.js` parsed a quote by recursion, one level per ">", and filled every
table row short of its header with empty cells. 5,000 ">" overflowed the stack: the answer
never rendered, and the conversation never restored after a reload. 600 header cells over
600 rows of "|" (3.6 kB) made 360,000 cells, re-rendered on every frame while streaming.
A bidi override made an answer show text other than it held, and code other than it copied.
A heading's and a table rule's regular expressions backtracked over a long run of spaces: one
line of "# a", 5,000 spaces and "b" (5 kB) held the page's thread 70 s per render.
"""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response, tool_call_response
from tests.e2e.conftest import CHROMIUM
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

DEEP_QUOTE = ">" * 5000 + " deep"
COLUMNS = 600
WIDE_TABLE = "|" + "a|" * COLUMNS + "\n|" + "-|" * COLUMNS + "\n" + "|\n" * COLUMNS
MAX_FILLED_CELLS = 4096  # markdown.js
RLO, PDF, RLI, PDI = "\u202e", "\u202c", "\u2067", "\u2069"
OVERRIDDEN = (
    f"Open the report {RLO}fdp.exe{PDF} now.\n\n"
    f"```\nif (user != admin{RLI} ) {{ // not admin{PDI} allow()\n```"
)
# A heading line and a table rule, each a long run of spaces that ends in a letter.
SPACED_HEADING = "# Spaced" + " " * 5000 + "out"
SPACED_RULE = "a | b\n-" + " " * 30000 + "x"


def chunks(text: str, size: int = 500) -> list[str]:
    return [text[at : at + size] for at in range(0, len(text), size)]


def test_a_deep_quote_renders_and_the_conversation_restores(site, scripted, open_page):
    scripted.enqueue(text_response(chunks(DEEP_QUOTE)), text_response(["Still ", "here."]))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "quote yourself")
    wait_answered(page)
    ask(page, "and then?")
    wait_answered(page)
    answers = page.locator(".chat-answer")
    expect(answers.first).to_contain_text("deep")
    expect(answers.nth(1)).to_contain_text("Still here.")

    page.reload()
    expect(page.locator("#chat-panel .chat-turn")).to_have_count(2)
    expect(answers.first).to_contain_text("deep")
    expect(answers.nth(1)).to_contain_text("Still here.")
    assert page.locator(".chat-status--inline").count() == 0  # "could not restore"
    assert answers.first.locator("blockquote").count() <= 8
    # The open_page fixture fails the test on any uncaught error (the RangeError).


def test_a_table_of_empty_rows_stops_filling_cells(site, scripted, open_page):
    scripted.enqueue(text_response(chunks(WIDE_TABLE)))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "a table please")
    wait_answered(page)
    answer = page.locator(".chat-answer")
    expect(answer.locator("table")).to_have_count(1)
    cells = answer.locator("td").count()
    assert 0 < cells <= MAX_FILLED_CELLS + COLUMNS, cells


def test_bidi_overrides_in_an_answer_are_not_obeyed(site, scripted, open_page):
    scripted.enqueue(text_response([OVERRIDDEN]))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "the report?")
    wait_answered(page)
    answer = page.locator(".chat-answer")
    expect(answer).to_contain_text("Open the report fdp.exe now.")
    shown = answer.evaluate("(node) => node.textContent")
    assert not {RLO, PDF, RLI, PDI} & set(shown), ascii(shown)
    expect(answer.locator("pre code")).to_have_text("if (user != admin ) { // not admin allow()")


def test_bidi_overrides_in_a_search_the_model_made_are_not_obeyed(site, scripted, open_page):
    # The step chip quotes the model's query: "Searched for “‮txt.exe‬”" read "exe.txt".
    query = json.dumps({"query": f"report {RLO}fdp.exe{PDF}"})
    scripted.enqueue(
        tool_call_response([("call_1", "search_knowledge_base", query)]),
        text_response(["Nothing ", "found."]),
    )
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "the report?")
    wait_answered(page)
    step = page.locator(".chat-step__label").first
    expect(step).to_contain_text("report fdp.exe")
    shown = step.evaluate("(node) => node.textContent")
    assert not {RLO, PDF} & set(shown), ascii(shown)


def test_a_heading_or_table_rule_of_many_spaces_renders_at_once(site, scripted, open_page):
    answer_text = f"{SPACED_HEADING}\n\n{SPACED_RULE}\n\nThe end."
    scripted.enqueue(text_response(chunks(answer_text, 4000)))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "space it out")
    wait_answered(page)
    answer = page.locator(".chat-answer")
    expect(answer.locator(".chat-md-heading")).to_have_text("Spaced" + " " * 5000 + "out")
    expect(answer).to_contain_text("The end.")
    assert answer.locator("table").count() == 0  # "-   x" is no delimiter row
