"""What the sixth first-run walk found in the admin, fixed: checked with Django's client."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agent.loop import INVALID_ARGUMENTS, NOT_AN_OBJECT
from agent.models import Turn
from agent.selectors import turn_unanswered_groups
from testing_support.model_server import error_response
from tests.agent.admin.factories import make_conversation, make_turn
from tests.agent.admin.test_screenshots import SCREENSHOTS
from tests.agent.chat_helpers import ask, connect, saved_turns
from tests.e2e.conftest import sign_in

CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}
UNANSWERED = "/admin/agent/conversation/unanswered/"


@pytest.mark.django_db(transaction=True)
async def test_a_model_call_refused_before_answering_records_no_tokens(scripted):
    # The endpoint said 401 and billed nothing (the token counter agrees), yet the turn was
    # recorded with ~1,491 input tokens: the prompt's estimate, which only the budget is charged.
    from agent.shared import state

    scripted.enqueue(error_response(401, message="Incorrect API key provided"))
    socket = await connect()
    events = await ask(socket, "How do I cap the steps?")
    await socket.disconnect()

    assert (events[-1]["type"], events[-1]["code"]) == ("error", "model_error")
    [turn] = await saved_turns()
    assert (turn.status, turn.input_tokens, turn.output_tokens) == ("error", 0, 0)
    # The budget still counts the prompt: a visitor cannot spend a refused endpoint for free.
    assert state()._get(f"tok:c:{events[0]['conversation_id']}") > 1000


@pytest.mark.django_db
def test_the_transcript_says_a_failed_model_call_counted_no_tokens(staff_client):
    conversation = make_conversation()
    error = "The language model returned an error (HTTP 401)."
    make_turn(conversation, status=Turn.Status.ERROR, error_code="model_error", error=error,
              input_tokens=0, output_tokens=0)  # fmt: skip
    url = f"/admin/agent/conversation/{conversation.pk}/change/"

    html = staff_client.get(url).content.decode()
    assert "none: the model call failed" in html and "0 in · 0 out" not in html
    assert "无：模型调用失败" in staff_client.get(url, headers=CHINESE).content.decode()


CROSSING = """() => [...document.querySelectorAll('.dc-chart-scroll')].flatMap((box, chart) => {
  // The labels the chart's scroll edge crosses: [chart, label] indexes.
  const edge = box.getBoundingClientRect();
  return [...box.querySelectorAll('text')].map((text, label) => {
    const r = text.getBoundingClientRect();
    const crossed = r.width && (r.left < edge.left - 0.5 && r.right > edge.left + 0.5
      || r.left < edge.right - 0.5 && r.right > edge.right + 0.5);
    return crossed ? [[chart, label]] : [];
  }).flat();
})"""


def assert_cut_dates_hidden(page) -> None:
    scrollers = page.locator(".dc-chart-scroll")
    for chart, label in page.evaluate(CROSSING):
        expect(scrollers.nth(chart).locator("text").nth(label)).to_have_css("visibility", "hidden")


@pytest.mark.e2e
@pytest.mark.parametrize(("width", "days"), [(390, 7), (360, 30), (414, 90)])
def test_on_a_phone_a_day_chart_shows_no_date_cut_in_half(
    live_server, showcase, browser, width, days
):
    # The charts open scrolled to their newest days, wherever the card's edge falls: the date
    # there showed in part ("1" of "Oct 21", "2" of "Dec 2").
    page = browser.new_page(viewport={"width": width, "height": 800}, locale="zh-CN")
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/conversation/dashboard/?days={days}")
    scrollers = page.locator(".dc-chart-scroll")
    assert page.evaluate(CROSSING)  # this width cuts a date, or the test proves nothing
    assert_cut_dates_hidden(page)
    scrollers.first.screenshot(path=str(SCREENSHOTS / f"admin-dashboard-{width}-{days}d.png"))

    # Scrolled to its oldest day, the first date shows whole, and the newly cut ones do not.
    scrollers.first.evaluate("(box) => { box.scrollLeft = -box.scrollWidth; }")
    first = scrollers.first.locator("text[text-anchor=middle]").first
    expect(first).to_have_css("visibility", "visible")
    assert_cut_dates_hidden(page)
    page.close()


@pytest.mark.django_db
def test_a_search_refused_for_its_arguments_is_not_a_search_that_failed(staff_client):
    # The model sent {"query": 5}: the search never ran, yet the question was flagged "Search
    # failed (timed out or raised) … the blog may well cover this: read the server log".
    bad = [
        f"{INVALID_ARGUMENTS}search_knowledge_base: query: Input should be a valid string.",
        f"{NOT_AN_OBJECT}search_knowledge_base are not a JSON object: '5'.",
    ]
    for question, error in zip(["Show me the list", "列出文章"], bad, strict=True):
        call = {"arguments": {"query": 5}, "ok": False, "result": error, "error": error}
        make_turn(make_conversation(), index=1, user_message=question, answered=False,
                  tool_calls=[call])  # fmt: skip
    timed_out = "Error: search_knowledge_base timed out after 10s."
    call = {"ok": False, "result": timed_out, "error": timed_out}
    make_turn(make_conversation(), index=1, user_message="Why cap the steps?", answered=False,
              tool_calls=[call])  # fmt: skip

    failed = {group.question: group.search_failed for group in turn_unanswered_groups()}
    assert failed == {"Show me the list": 0, "列出文章": 0, "Why cap the steps?": 1}
    assert staff_client.get(UNANSWERED).content.decode().count("Search failed</span>") == 1


@pytest.fixture
def asked_often(transactional_db):
    for minutes in range(4):
        make_turn(make_conversation(), index=1, user_message="法国的首都是哪里？", answered=False,
                  started_at=timezone.now() - timedelta(minutes=19 + minutes))  # fmt: skip


@pytest.mark.e2e
def test_on_a_phone_a_transcript_link_keeps_one_line(live_server, showcase, asked_often, browser):
    # At 390 px in Chinese "记录 1" broke between 记 and 录, the link's two halves two lines apart.
    broken = []
    for width in (360, 375, 390, 414):
        page = browser.new_page(viewport={"width": width, "height": 800}, locale="zh-CN")
        sign_in(page, live_server.url)
        page.goto(f"{live_server.url}{UNANSWERED}")
        lines = page.locator(".dc-question a[href*='#turn-']").evaluate_all(
            "(links) => links.map((a) => a.getClientRects().length)"
        )
        assert lines, width
        broken += [(width, n) for n in lines if n > 1]
        if width == 390:
            page.screenshot(path=str(SCREENSHOTS / "admin-unanswered-390-zh.png"), full_page=True)
        page.close()
    assert broken == []
