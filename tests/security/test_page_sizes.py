"""One request cannot read the whole blog: `/api/articles` pages have a largest size.

`page_size` had a floor and no ceiling, so `/api/articles?page_size=1000000` serialised every
published article with its tags in one answer (and `/api/articles` has no rate limit): on a
blog of thousands of articles, a request 100s of times the work of the default page of 10.
"""

import httpx
import pytest
from channels.db import database_sync_to_async

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def publish(count: int) -> None:
    from django.utils import timezone

    from blog.models import Article

    now = timezone.now()  # bulk_create skips save(), which would set it
    Article.objects.bulk_create(
        Article(title=f"Note {n}", slug=f"note-{n}", summary="s", body="b",
                status=Article.Status.PUBLISHED, published_at=now)
        for n in range(count)
    )  # fmt: skip


async def test_a_page_is_at_most_a_hundred_articles(serve):
    await publish(150)
    server = serve("page-sizes")

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        huge = await client.get("/api/articles", params={"page_size": 1_000_000})
        largest = await client.get("/api/articles", params={"page_size": 100})
        default = await client.get("/api/articles")

    assert huge.status_code == 422  # a bad parameter, like page 10**6; before: 150 articles
    assert (largest.status_code, len(largest.json()["items"])) == (200, 100)
    assert (default.json()["count"], len(default.json()["items"])) == (150, 10)
