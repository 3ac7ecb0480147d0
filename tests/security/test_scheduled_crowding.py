"""Chunks of a post scheduled for later cannot push the visible ones out of full-text search.

The full-text list ranks at most SEARCH_TEXT_MAX_MATCHES matching chunks, and the cap was
taken before the published filter: a scheduled post (indexed when it is saved) whose chunks
use a word filled every place, and the visible articles using it were never ranked. Anyone
with an editor's draft queue, or simply a long post waiting for its date, hid the blog's own
articles from keyword search (only the vector half still found them, at half the score).
"""

from datetime import timedelta

import httpx
import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from tests.security.clients import published_indexed

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 20
CROWD, OWN = "zorblax", "quintic"  # the scheduled post's word; a word only the visible one uses


@database_sync_to_async
def articles() -> None:
    """A scheduled post with more chunks using CROWD than the cap, then one visible article
    using both words (its chunk written last, after the crowd in the table)."""
    from blog.embeddings import embedder_get
    from blog.indexing import chunk_reindex
    from blog.models import Article

    sections = "\n\n".join(
        f"## Part {n}\n\nThe {CROWD} mark {n} ships next month with new parts." for n in range(30)
    )
    later = Article.objects.create(
        title="Launch",
        slug="launch",
        summary="s",
        body=sections,
        status=Article.Status.PUBLISHED,
        published_at=timezone.now() + timedelta(days=30),
    )
    chunk_reindex(article=Article.objects.get(pk=later.pk), embedder=embedder_get())
    assert later.chunks.filter(text__contains=CROWD).count() > CAP
    published_indexed(
        title="Field notes",
        slug="field-notes",
        summary="s",
        body=f"Our {CROWD} and {OWN} notes from the field.",
    )


async def score(client: httpx.AsyncClient, word: str) -> float:
    response = await client.get("/api/search", params={"q": word, "all": "true"})
    assert response.status_code == 200, response.text
    hits = response.json()
    assert [hit["url"] for hit in hits] == ["/articles/field-notes/"]  # the scheduled one hidden
    return hits[0]["score"]


async def test_a_scheduled_posts_chunks_do_not_crowd_visible_ones_out_of_full_text(serve):
    await articles()
    server = serve("scheduled-crowding", SEARCH_TEXT_MAX_MATCHES=str(CAP))

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        crowded = await score(client, CROWD)
        alone = await score(client, OWN)

    # The only visible article is first in both lists for either word: the same fused score.
    # Crowded out of the full-text list, it had the vector list's half.
    assert crowded == alone
