"""Screenshots of the review pages in a real Chromium, saved for people to look at."""

from pathlib import Path

import pytest

from tests.e2e.conftest import sign_in

FITS = (
    "(sel) => { const el = document.querySelector(sel); return el.scrollWidth <= el.clientWidth; }"
)
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def watch_for_errors(page, errors: list[str]) -> None:
    """Record CSP refusals and failed requests (a missing stylesheet would 404)."""

    def on_console(message) -> None:
        if "Refused" in message.text:
            errors.append(message.text)

    def on_response(response) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            errors.append(f"{response.status} {response.url}")

    page.on("console", on_console)
    page.on("response", on_response)


def test_screenshots_of_the_list_a_transcript_and_the_dashboard(live_server, showcase, browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    transcript = f"/admin/agent/conversation/{showcase.pk}/change/"
    # (file name, page, colour scheme, whole page or first screen); 1440 wide, a laptop.
    shots = [
        ("admin-list", "/admin/agent/conversation/", "light", False),
        ("admin-transcript", transcript, "light", True),
        ("admin-dashboard", "/admin/agent/conversation/dashboard/?days=30", "light", True),
        ("admin-unanswered", "/admin/agent/conversation/unanswered/", "light", False),
        ("admin-transcript-dark", transcript, "dark", True),
    ]
    errors: list[str] = []
    pages = {}
    for scheme in ("light", "dark"):
        pages[scheme] = browser.new_page(
            viewport={"width": 1440, "height": 900}, color_scheme=scheme
        )
        watch_for_errors(pages[scheme], errors)
        sign_in(pages[scheme], live_server.url)

    for name, path, scheme, full_page in shots:
        page = pages[scheme]
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
        target = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(target), full_page=full_page)
        assert target.stat().st_size > 10_000, name
        if name == "admin-list":
            # Every column fits beside the sidebar and the filters: no sideways scrolling.
            assert page.evaluate(FITS, ".results")

    assert errors == []


ROW_LINES = """(sel) => [...document.querySelectorAll(sel)].map((td) => {
  const lh = parseFloat(getComputedStyle(td).lineHeight) || 16;
  return Math.round(td.getBoundingClientRect().height / lh);
})"""


@pytest.fixture
def long_titles(transactional_db):
    from blog.models import Article

    for n in range(3):
        Article.objects.create(
            title=f"A fairly long article title about HNSW and IVFFlat indexes, part {n}",
            slug=f"a-fairly-long-article-title-about-hnsw-and-ivfflat-indexes-part-{n}",
            body="Body.",
            status=Article.Status.PUBLISHED,
        )


def test_changelists_fit_at_1280_without_clipping_or_tall_rows(
    live_server, showcase, long_titles, browser
):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)

    page.goto(f"{live_server.url}/admin/agent/conversation/")
    page.screenshot(path=str(SCREENSHOTS / "admin-list-1280.png"))
    assert page.evaluate(FITS, ".results")  # the right-hand columns are not clipped
    assert max(page.evaluate(ROW_LINES, "#result_list .dc-slug")) == 1  # was 7 lines

    # The turns list is where a reviewer looks for declined and down-voted answers: those two
    # columns were past the right edge, behind a sideways scroll.
    page.goto(f"{live_server.url}/admin/agent/turn/")
    page.screenshot(path=str(SCREENSHOTS / "admin-turns-1280.png"))
    assert page.evaluate(FITS, ".results")
    for column in ("answered_mark", "feedback", "duration"):
        assert page.locator(f"#result_list td.field-{column}").first.is_visible()

    page.goto(f"{live_server.url}/admin/blog/article/")
    page.screenshot(path=str(SCREENSHOTS / "admin-articles-1280.png"))
    assert page.evaluate(FITS, ".results")  # "indexed at" and "index" are in view
    for column in ("indexed", "index_state"):
        assert page.locator(f"#result_list td.field-{column}").first.is_visible()
    page.close()


WRITE_VALUES = (
    "(text) => document.querySelectorAll('.dc-kpi__value').forEach((v) => (v.textContent = text))"
)


def test_the_dashboards_figures_fit_their_cards_at_1280(live_server, showcase, browser):
    # Six cards a row at 1280 px broke "381.3 ms" after the number, and left two cards alone.
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/conversation/dashboard/?days=30")
    page.screenshot(path=str(SCREENSHOTS / "admin-dashboard-1280.png"), full_page=True)

    assert page.locator(".dc-kpi__value").count() == 8
    assert set(page.evaluate(ROW_LINES, ".dc-kpi__value")) == {1}
    # The widest figures a live blog shows (this data's are shorter) still take one line.
    for widest in ("381.3 ms", "1,234,567"):
        page.evaluate(WRITE_VALUES, widest)
        assert set(page.evaluate(ROW_LINES, ".dc-kpi__value")) == {1}, widest
    rows = page.evaluate("[...document.querySelectorAll('.dc-kpi')].map((c) => c.offsetTop)")
    assert sorted(rows.count(top) for top in set(rows)) == [4, 4]
    page.close()


TEXT_LINES = """(sel) => [...document.querySelectorAll(sel)].map((node) => {
  const range = document.createRange();
  range.selectNodeContents(node);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
})"""


def test_the_dashboard_fits_a_phone_in_chinese(live_server, showcase, browser):
    # At 375 px three cards a row broke "327.7 ms" after the number, and "7 天" after the 7.
    page = browser.new_page(viewport={"width": 375, "height": 740}, locale="zh-CN")
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/conversation/dashboard/?days=30")
    page.screenshot(path=str(SCREENSHOTS / "admin-dashboard-375-zh.png"), full_page=True)

    assert page.locator(".dc-periods a").first.text_content().strip() == "7 天"
    assert set(page.evaluate(TEXT_LINES, ".dc-periods a")) == {1}
    # Durations read "毫秒" in Chinese now; "100.1 毫" and "秒" took two lines.
    assert "毫秒" in page.locator(".dc-kpis").text_content()
    for widest in ("381.3 毫秒", "1,234,567"):
        page.evaluate(WRITE_VALUES, widest)
        assert set(page.evaluate(ROW_LINES, ".dc-kpi__value")) == {1}, widest
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    # The turns-per-day chart keeps dates one can read (3 px tall when squeezed into the card);
    # it scrolls inside its card instead.
    heights = page.evaluate(
        "[...document.querySelectorAll('#turns-per-day-title ~ text.dc-chart__axis, "
        ".dc-card--wide .dc-chart__axis')].map((t) => t.getBoundingClientRect().height)"
    )
    assert heights and min(heights) >= 8, heights
    # The tools table opens on its tool names, and a latency keeps one line ("8.5 毫秒").
    left = page.locator(".dc-table tbody a").first.evaluate("(a) => a.getBoundingClientRect().left")
    assert left >= 0
    assert set(page.evaluate(TEXT_LINES, ".dc-table td.dc-num")) == {1}
    page.close()


IN_VIEW = """(sel) => [...document.querySelectorAll(sel)].map((node) => {
  // Whether the node shows: inside the box of every scrolling ancestor and of the screen.
  const r = node.getBoundingClientRect();
  if (!r.width || getComputedStyle(node).display === 'none') return false;
  for (let box = node.parentElement; box; box = box.parentElement) {
    if (getComputedStyle(box).overflowX === 'visible') continue;
    const b = box.getBoundingClientRect();
    if (r.left < b.left - 0.5 || r.right > b.right + 0.5) return false;
  }
  return r.left >= 0 && r.right <= innerWidth;
})"""


def test_on_a_phone_the_day_charts_keep_their_legend_and_scale_in_view(
    live_server, showcase, browser
):
    # The day-by-day charts scroll sideways on a phone and open on their newest days: the
    # tokens chart's legend (which line is input, which output) and both charts' scale sat at
    # the left end, scrolled out of view.
    page = browser.new_page(viewport={"width": 375, "height": 740})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/conversation/dashboard/?days=30")
    card = page.locator("section[aria-labelledby=tokens-heading]")
    card.screenshot(path=str(SCREENSHOTS / "admin-dashboard-375-tokens.png"))

    assert page.evaluate(IN_VIEW, "section[aria-labelledby=tokens-heading] .dc-legend li") == [
        True,
        True,
    ]
    assert card.locator(".dc-legend").inner_text().split() == ["Input", "Output"]
    for chart in ("turns-per-day", "tokens-per-day"):
        scale = f"svg:has(#{chart}-title) .dc-chart__axis:not([text-anchor=middle])"
        shown = [
            label
            for label, visible in zip(
                page.locator(scale).all_text_contents(), page.evaluate(IN_VIEW, scale), strict=True
            )
            if visible
        ]
        assert len(shown) == 3, (chart, shown)  # 0, the middle line and the top, once each
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.close()


@pytest.fixture
def pasted_url(transactional_db):
    from tests.agent.admin.factories import make_conversation, make_turn

    make_turn(make_conversation(), index=1, user_message="https://example.com/" + "a" * 150)


def test_a_pasted_url_as_a_question_does_not_push_the_columns_off_screen(
    live_server, showcase, pasted_url, browser
):
    # 80 characters with no space could not wrap: vote, steps and duration went past 1280 px.
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)

    for url in ("/admin/agent/turn/", "/admin/agent/conversation/"):
        page.goto(live_server.url + url)
        assert page.evaluate(FITS, ".results"), url
    page.screenshot(path=str(SCREENSHOTS / "admin-turns-long-question-1280.png"))
    page.close()


ROW_HEIGHTS = "[...document.querySelectorAll('#result_list tbody tr')].map((tr) => tr.offsetHeight)"


@pytest.fixture
def index_jobs(transactional_db):
    from django.db import connection

    # 30 article indexing jobs as blog.indexing queues them, through procrastinate's procedure.
    rows = ",".join(
        f"ROW('index', 'blog.article_index', 0, 'index', 'article-index-{n}',"
        f' \'{{"article_id": {n}, "force": false}}\', NULL)::procrastinate_job_to_defer_v1'
        for n in range(1, 31)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT procrastinate_defer_jobs_v1(ARRAY[{rows}])")  # noqa: S608
    yield
    # Gone after the test: the flush between tests leaves procrastinate's tables, and a queued
    # job holds its queueing lock ("article-index-N") for whatever runs next in this worker.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_jobs WHERE queueing_lock LIKE 'article-index-%'")


def test_the_job_list_on_a_phone_keeps_its_rows_short(live_server, showcase, index_jobs, browser):
    # The arguments column was squeezed to a few characters a line: 250 px a row, 41,000 px for
    # a page of jobs. Now the table scrolls sideways and a row is a few lines.
    page = browser.new_page(viewport={"width": 375, "height": 740})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/procrastinate/procrastinatejob/")
    page.screenshot(path=str(SCREENSHOTS / "admin-jobs-375.png"))

    # The 30 above, and any the showcase's articles queued.
    assert page.locator("#result_list tbody tr").count() >= 30
    heights = page.evaluate(ROW_HEIGHTS)
    assert max(heights) <= 140, heights  # the summary's five lines; it was 250
    assert page.locator("#result_list td.field-arguments").first.bounding_box()["width"] >= 150
    assert page.evaluate("document.documentElement.scrollHeight") < 6000
    page.close()


@pytest.fixture
def markdown_turn(transactional_db):
    from tests.agent.admin.factories import make_conversation, make_turn

    return make_turn(make_conversation(), answer="## Tuning HNSW\n\n- **m**: links\n- ef: list")


# An answer's first heading and list item: background, bullet, size.
ANSWER_LOOKS = """(sel) => {
  const h = getComputedStyle(document.querySelector(sel + " h2"));
  const li = getComputedStyle(document.querySelector(sel + " li"));
  return [h.backgroundColor, li.listStyleType, h.fontSize];
}"""


def test_the_turn_page_shows_the_answer_as_the_transcript_does(
    live_server, showcase, markdown_turn, browser
):
    # Inside the admin's form an answer's "## heading" became a blue title bar and its list
    # lost its bullets; they read as in the transcript.
    turn = markdown_turn
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)

    page.goto(f"{live_server.url}/admin/agent/conversation/{turn.conversation_id}/change/")
    in_transcript = page.evaluate(ANSWER_LOOKS, f"#turn-{turn.index} .dc-answer")
    page.goto(f"{live_server.url}/admin/agent/turn/{turn.pk}/change/")
    on_its_page = page.evaluate(ANSWER_LOOKS, ".field-answer_text .dc-answer")
    page.locator(".field-answer_text").screenshot(path=str(SCREENSHOTS / "admin-turn-answer.png"))

    assert on_its_page == in_transcript == ["rgba(0, 0, 0, 0)", "disc", "16px"]
    page.close()


@pytest.fixture
def commented_turn(transactional_db):
    from tests.agent.admin.factories import make_conversation, make_turn

    comment = "It only repeated the introduction; I asked which values of m to use. " * 3
    make_turn(make_conversation(), index=1, vote="down", feedback_comment=comment,
              user_message="How do I tune an HNSW index for 100k chunks?")  # fmt: skip


def test_a_vote_s_comment_shows_in_the_turn_list_and_the_columns_still_fit(
    live_server, showcase, commented_turn, browser
):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/turn/")
    row = page.locator("#result_list tbody tr", has=page.locator(".dc-vote-comment"))
    row.screenshot(path=str(SCREENSHOTS / "admin-turns-comment-1280.png"))
    comment = row.locator(".dc-vote-comment")

    assert comment.inner_text().startswith("“It only repeated the introduction;")
    assert page.evaluate(FITS, ".results")  # duration is still in view
    assert comment.bounding_box()["height"] < 6 * 18  # cut short: a few lines, not a paragraph
    page.close()


@pytest.fixture
def long_turn(transactional_db):
    from tests.agent.admin.factories import make_conversation, make_turn

    calls = [{"step": s, "ok": s % 3 != 0, "error": "" if s % 3 else "boom"} for s in range(1, 41)]
    make_turn(make_conversation(), index=1, status="interrupted", step_count=12,
              input_tokens=58_000, output_tokens=3_410, duration_ms=184_000, vote="down",
              feedback_comment="See https://docs.example.com/pgvector/hnsw-tuning-parameters",
              user_message="Which of these is slow?", tool_calls=calls)  # fmt: skip


@pytest.mark.parametrize("order", ["", "?o=8", "?o=-7"])
def test_the_turn_list_fits_1280_with_room_for_a_long_row_and_a_sorted_column(
    live_server, showcase, long_turn, browser, order
):
    # The list fitted 1280 px with 0 px to spare: a link in a vote's comment, "Interrupted",
    # "40 · 13 failed" or sorting by tokens (its header grows the sort arrows) each pushed
    # tokens and duration past the right edge.
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/agent/turn/{order}")
    page.screenshot(path=str(SCREENSHOTS / f"admin-turns-long-1280{order.replace('?', '-')}.png"))

    assert page.evaluate(FITS, ".results")
    duration = page.locator("#result_list td.field-duration").first.bounding_box()
    assert duration["x"] + duration["width"] <= 1280
    # Django's sidebar, narrower, still shows each name on one line.
    assert set(page.evaluate(TEXT_LINES, "#nav-sidebar th[scope=row] a")) == {1}
    page.close()


ALIGNMENTS = """() => [...document.querySelectorAll(
  '#result_list th[class*="column-"], #result_list tbody tr:first-child td[class*="field-"]'
)].map((cell) => [cell.className.match(/(?:column|field)-(\\w+)/)[1], cell.tagName,
  getComputedStyle(cell).textAlign])"""


@pytest.fixture
def tagged(showcase):
    from blog.models import Article

    Article.objects.create(title="Tagged", slug="tagged", body="x").tags.create(name="counted")


def test_the_tags_list_sets_its_counts_right_as_the_other_reports_do(live_server, tagged, browser):
    # Its "Articles" and "Conversations" columns were left-aligned, figures under a heading's
    # start, where every other report (turns, tokens, chunks) sets them right.
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server.url)

    page.goto(f"{live_server.url}/admin/blog/tag/")
    page.screenshot(path=str(SCREENSHOTS / "admin-tags-1280.png"))
    cells = page.evaluate(ALIGNMENTS)
    page.goto(f"{live_server.url}/admin/blog/article/")
    cells += page.evaluate(ALIGNMENTS)
    page.close()

    figures = ("article_total", "conversation_total", "chunk_count")
    aligned = {(name, tag): align for name, tag, align in cells if name in figures}
    assert len(aligned) == 6 and set(aligned.values()) == {"right"}, aligned
    assert {align for name, _, align in cells if name in ("name", "title")} == {"left"}
