"""The fifth first-run walk (reader, author, reviewer; desktop, tablet, phone; English and
Chinese): what it found, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e import test_rough_edges
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_rough_edges import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

reviewer = test_rough_edges.reviewer  # the admin account, a fixture


HEADER_ROWS = """() => {
  // The admin header's lines: the top of each of its parts that shows, rounded, deduplicated.
  const header = document.getElementById('header');
  const parts = [document.getElementById('site-name'),
                 ...header.querySelectorAll('#user-tools a, #user-tools button'),
                 header.querySelector('.dc-time-zone'), header.querySelector('.dc-lang-switch')];
  const tops = parts.filter((n) => n && n.getClientRects().length)
    .map((n) => n.getBoundingClientRect()).map((r) => Math.round(r.top + r.height / 2));
  const rows = [];
  for (const top of tops.sort((a, b) => a - b)) {
    if (!rows.length || top - rows.at(-1) > 8) rows.push(top);
  }
  const middle = (n) => { const r = n.getBoundingClientRect(); return (r.top + r.bottom) / 2; };
  const name = middle(document.getElementById('site-name'));
  const lang = middle(header.querySelector('.dc-lang-switch'));
  return {rows: rows.length, switchBesideName: Math.abs(name - lang) < 8,
          sideways: document.documentElement.scrollWidth > innerWidth};
}"""


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
@pytest.mark.parametrize(("width", "rows"), [(390, 3), (768, 2), (1024, 2)])
def test_the_admin_header_takes_two_or_three_lines_not_five(
    site, open_page, reviewer, locale, width, rows
):
    # Django stacks the header in a centred column up to 1024 px: the name, the user links, the
    # time zone and the English/中文 switch took five lines on a phone (151 px), four on a tablet.
    page = open_page({"width": width, "height": 800}, locale=locale, timezone_id="Asia/Shanghai")
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/agent/conversation/")
    header = page.evaluate(HEADER_ROWS)
    screenshot(page, f"admin-header-{width}-{locale}")
    assert header["rows"] <= rows
    assert header["switchBesideName"]
    assert not header["sideways"]
    expect(page.locator("#header .dc-time-zone")).to_be_visible()
    expect(page.locator("#logout-form button")).to_be_visible()
    if width < 768:  # the greeting gives way on a phone
        expect(page.locator("#user-tools .dc-welcome")).to_be_hidden()


PAINTS = """new PerformanceObserver((list) => {
  // Each paint of each document, with the zone its times were written in (kept over a reload).
  for (const entry of list.getEntries()) {
    const meta = document.querySelector('meta[name="docent-time-zone"]');
    const log = JSON.parse(sessionStorage.getItem('paints') || '[]');
    log.push(`${entry.name} ${meta ? meta.content : '?'}`);
    sessionStorage.setItem('paints', JSON.stringify(log));
  }
}).observe({type: 'paint', buffered: true});"""


def test_a_page_written_in_another_zone_is_read_again_before_it_is_ever_shown(
    site, open_page, reviewer
):
    # After a trip (the cookie says Shanghai, the browser Kolkata) the page showed Shanghai's
    # times, then flashed and came back in Kolkata's: the zone script was a deferred module.
    page = open_page({"width": 1280, "height": 800}, timezone_id="Asia/Kolkata")
    sign_in(page, site, reviewer)
    host = site.split("//", 1)[1].split(":", 1)[0]
    page.context.add_cookies(
        [{"name": "docent_time_zone", "value": "Asia/Shanghai", "domain": host, "path": "/admin/"}]
    )
    page.evaluate("sessionStorage.clear()")
    page.context.add_init_script(PAINTS)
    documents = []
    page.on("request", lambda r: r.resource_type == "document" and documents.append(r.url))

    page.goto(f"{site}/admin/agent/conversation/")
    zone = page.locator("#header .dc-time-zone")
    expect(zone).to_contain_text("(UTC+5:30)")
    page.wait_for_load_state("load")
    assert len(documents) == 2  # read again once
    # A loaded machine may paint a while after "load": wait for the page's own first paint.
    page.wait_for_function("(sessionStorage.getItem('paints') || '').includes('contentful')")
    paints = page.evaluate("JSON.parse(sessionStorage.getItem('paints'))")
    assert not any("Shanghai" in paint for paint in paints), paints


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_on_a_phone_the_filters_left_at_all_fold_so_the_list_shows(
    site, open_page, reviewer, locale
):
    # At 390 px five open lists of choices stood above the conversations: the first one began
    # a screen and a half down.
    page = open_page({"width": 390, "height": 844}, locale=locale)
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/agent/conversation/")
    expect(page.locator("#changelist-filter details").first).to_be_attached()
    assert page.locator("#changelist-filter details").count() >= 4  # status, date, limit, error
    expect(page.locator("#changelist-filter details[open]")).to_have_count(0)
    # The search box, just above the list, had been 810 px down.
    assert page.locator("#toolbar").bounding_box()["y"] < 600
    screenshot(page, f"admin-phone-filters-{locale}")

    # A filter in use stays open; one the reviewer opens stays so on the next page.
    page.goto(f"{site}/admin/agent/conversation/?step_limit=yes")
    expect(page.locator("#changelist-filter details[open]")).to_have_count(1)
    opened = page.locator("#changelist-filter details").last
    title = opened.get_attribute("data-filter-title")
    opened.locator("summary").click()
    page.goto(f"{site}/admin/agent/conversation/")
    expect(
        page.locator(f'#changelist-filter details[data-filter-title="{title}"]')
    ).to_have_attribute("open", "")
    # Django's filters.js keeps the tab's open filters open; the others stay folded.
    assert page.locator("#changelist-filter details:not([open])").count() >= 2


def test_on_a_desktop_every_filter_stays_open(site, open_page, reviewer):
    page = open_page({"width": 1280, "height": 860})
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/agent/conversation/")
    filters = page.locator("#changelist-filter details")
    expect(filters.first).to_be_attached()
    expect(page.locator("#changelist-filter details[open]")).to_have_count(filters.count())
