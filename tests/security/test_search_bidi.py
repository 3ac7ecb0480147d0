"""A query quoted on the search page cannot reorder the site's sentence around it.

The page quotes its query in its title and in a sentence ("Nothing in the blog matches “…”.",
"Another site sent you here to search for “…”. Press Search…"), and a link from any site
chooses that query. A RIGHT-TO-LEFT OVERRIDE in it was obeyed to the end of the sentence: the
words after it, and the site's closing quote and full stop, read backwards. The pages come from
a live server, as another site's link or a reader's search gets them; Chromium lays them out.
"""

import httpx
import pytest

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RLO, PDI = "\u202e", "\u2069"
# After an override "ZQ" reads "QZ"; a PDI of the query's own would close an isolate early.
QUERY = f"zz {RLO}ZQ{PDI}{RLO}ZQ"
CROSS_SITE = {
    "Sec-Fetch-Site": "cross-site",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Dest": "document",
}

# For each "ZQ", and each pair of quotation marks, in the page's text: does it read forward?
READS_FORWARD = """() => {
  const left = (node, i) => {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    return range.getBoundingClientRect().left;
  };
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let at = node.data.indexOf('ZQ'); at >= 0; at = node.data.indexOf('ZQ', at + 1)) {
      found.push(left(node, at) < left(node, at + 1));
    }
    const open = node.data.indexOf('\u201c'), close = node.data.lastIndexOf('\u201d');
    if (open >= 0 && close > open) found.push(left(node, open) < left(node, close));
  }
  return found;
}"""


def pages(server) -> dict[str, str]:
    """The search page with QUERY: searched, and opened by another site's script."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        searched = client.get("/search/", params={"q": QUERY})
        moved = client.get("/search/", params={"q": QUERY}, headers=CROSS_SITE)
    assert "Press Search" in moved.text
    return {"searched": searched.text, "moved here": moved.text}


def test_an_override_in_the_query_reorders_nothing(serve):
    playwright = pytest.importorskip("playwright.sync_api")
    server = serve("search-bidi")
    seen = {}

    with playwright.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page()
        for name, html in pages(server).items():
            page.set_content(html)
            seen[name] = (page.evaluate(READS_FORWARD), RLO in page.title())
        chromium.close()

    # Two "ZQ" and one pair of quotes in the sentence; the title holds no override.
    assert seen == {name: ([True, True, True], False) for name in ("searched", "moved here")}
