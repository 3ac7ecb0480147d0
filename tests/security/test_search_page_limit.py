"""The reader's search page spends the address's search allowance, as `/api/search` does
(walk 19): a page that embeds its query without the count is the API's flood by another door.
Against a live daphne, through the whole middleware stack."""

import httpx
import pytest

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_the_search_page_and_the_api_share_one_allowance_and_the_page_refuses_kindly(serve):
    server = serve("search-page-limit", SEARCH_REQUESTS_PER_MINUTE_PER_IP="3")
    with httpx.Client(base_url=server.url, timeout=60) as client:
        free = [client.get("/search/", params={"q": q}).status_code for q in ("", "  ")]
        spent = [
            client.get("/search/", params={"q": "streaming"}).status_code,
            client.get("/api/search", params={"q": "streaming"}).status_code,
            client.get("/search/", params={"q": "hnsw"}).status_code,
        ]
        refused = client.get(
            "/search/", params={"q": "pgvector index"}, headers={"Accept-Language": "zh-hans"}
        )
        api_refused = client.get("/api/search", params={"q": "pgvector"})

    assert free == [200, 200]  # an empty query searches nothing, so spends nothing
    assert spent == [200, 200, 200]
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert refused.headers["Content-Type"].startswith("text/html")
    html = refused.text
    assert "一分钟内来自同一地址的搜索已超过本站的上限" in html
    assert 'value="pgvector index"' in html  # the search is kept in its box
    assert api_refused.status_code == 429


def test_another_sites_page_cannot_spend_the_search_page(serve):
    server = serve("search-page-cross-site", SEARCH_REQUESTS_PER_MINUTE_PER_IP="1")
    embedded = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "no-cors",
        "Sec-Fetch-Dest": "image",
    }
    with httpx.Client(base_url=server.url, timeout=60) as client:
        images = [
            client.get("/search/", params={"q": "hnsw"}, headers=embedded).status_code
            for _ in range(3)
        ]
        own = client.get("/search/", params={"q": "hnsw"}).status_code

    assert images == [403, 403, 403] and own == 200


def test_another_site_moving_the_window_here_gets_the_page_unsearched(serve):
    # A link shortener's script or a meta refresh navigates with no click of the reader's: a
    # plain-English 403 left them stranded. The page holds the query, spending nothing, until
    # they press Search; a frame still gets the 403.
    server = serve("search-page-unclicked", SEARCH_REQUESTS_PER_MINUTE_PER_IP="1")
    moved = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        pages = [
            client.get(
                "/search/",
                params={"q": "hnsw <b>index</b>"},
                headers={**moved, "Sec-Fetch-Dest": "document", "Accept-Language": "zh-CN"},
            )
            for _ in range(3)
        ]
        framed = client.get(
            "/search/", params={"q": "hnsw"}, headers={**moved, "Sec-Fetch-Dest": "iframe"}
        )
        pressed = client.get("/search/", params={"q": "hnsw"})

    assert [page.status_code for page in pages] == [200, 200, 200]
    html = pages[0].text
    # The query between bidi isolates (blog_tags.isolated, red team 33).
    assert "另一个网站把你带到这里搜索“\u2068hnsw &lt;b&gt;index&lt;/b&gt;\u2069”" in html
    assert 'value="hnsw &lt;b&gt;index&lt;/b&gt;"' in html and "Retry-After" not in pages[0].headers
    assert framed.status_code == 403
    assert pressed.status_code == 200  # the three pages spent none of the one search allowed


def test_with_redis_unreachable_the_search_page_says_search_is_unavailable(serve):
    # Nothing can be counted, so nothing is searched (the limits fail closed), as for the API.
    server = serve("search-page-redis-down", REDIS_URL="redis://127.0.0.1:9/0")  # discard port
    with httpx.Client(base_url=server.url, timeout=60) as client:
        response = client.get("/search/", params={"q": "hnsw"})
        empty = client.get("/search/")

    assert response.status_code == 503 and response.headers["Retry-After"]
    assert "Search is unavailable right now" in response.text and 'value="hnsw"' in response.text
    assert empty.status_code == 200  # an empty query needs no count


def test_no_spelling_method_or_header_searches_the_page_uncounted(serve):
    # Red team 32's attempts on the allowance, each of which held: a percent-escaped path, HEAD,
    # two `q`s (the limiter and the view read the same, the last), forged forwarding headers, a
    # fresh session and a same-origin `Sec-Fetch-Site` per request.
    server = serve("search-page-spellings", SEARCH_REQUESTS_PER_MINUTE_PER_IP="4")
    tries = [
        ("GET", "/%73earch/?q=hnsw", {}),
        ("HEAD", "/search/?q=streaming", {}),
        ("GET", "/search/?q=a&q=pgvector", {"X-Forwarded-For": "10.0.0.1"}),
        ("GET", "/sea%72ch/?q=budget", {"Forwarded": "for=10.0.0.2", "X-Real-IP": "10.0.0.3"}),
    ]
    fifth = ("GET", "/%73earch/?q=tokens", {"Sec-Fetch-Site": "same-origin"})
    with httpx.Client(base_url=server.url, timeout=60) as client:
        spent = [client.request(m, p, headers=h).status_code for m, p, h in tries]
        client.cookies.clear()
        refused = client.request(fifth[0], fifth[1], headers=fifth[2])
        unslashed = client.get("/search?q=hnsw")  # redirected to /search/ before any search

    assert spent == [200, 200, 200, 200]
    assert refused.status_code == 429
    assert unslashed.status_code == 301 and unslashed.headers["Location"] == "/search/?q=hnsw"
