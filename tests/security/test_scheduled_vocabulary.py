"""A post scheduled for later tells no one its words before it goes live.

It is indexed when it is saved (so it is searchable the moment it goes live), and search hid
its chunks, but the vocabulary behind every hit's `known` (and its relevance) was counted over
all chunks: `/api/search?q=<word>&all=true` said `known: 1` for a word only the scheduled post
held and 0 for any other, a yes/no answer to "does an unpublished post mention X?".
"""

from datetime import timedelta

import httpx
import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from tests.security.clients import published_indexed

pytestmark = pytest.mark.django_db(transaction=True)

SECRET, NONSENSE = "quixotron", "zyxwvutron"


@database_sync_to_async
def articles() -> int:
    """A public article, and one scheduled for next month that names the secret; its id."""
    from blog.embeddings import embedder_get
    from blog.indexing import chunk_reindex
    from blog.models import Article

    published_indexed(
        title="Vector notes", slug="vector-notes", summary="s", body="pgvector and HNSW indexes."
    )
    later = Article.objects.create(
        title="Launch",
        slug="launch",
        summary="s",
        body=f"Next month we launch {SECRET.title()}, our new vector appliance.",
        status=Article.Status.PUBLISHED,
        published_at=timezone.now() + timedelta(days=30),
    )
    chunk_reindex(article=Article.objects.get(pk=later.pk), embedder=embedder_get())
    return later.pk


@database_sync_to_async
def go_live(article_id: int) -> None:
    from blog.models import Article

    # The publication time passes; nothing is written to the index then.
    Article.objects.filter(pk=article_id).update(published_at=timezone.now())


async def evidence(client: httpx.AsyncClient, word: str) -> dict[str, tuple[float, float]]:
    response = await client.get("/api/search", params={"q": word, "all": "true"})
    assert response.status_code == 200, response.text
    return {hit["url"]: (hit["known"], hit["relevance"]) for hit in response.json()}


async def test_a_scheduled_posts_words_are_unknown_until_it_goes_live(serve):
    scheduled = await articles()
    server = serve("scheduled-vocabulary")

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        secret = await evidence(client, SECRET)
        nonsense = await evidence(client, NONSENSE)
        await go_live(scheduled)
        live = await evidence(client, SECRET)

    assert "/articles/launch/" not in secret  # hidden before and after the fix
    assert secret == nonsense  # the secret word reads exactly as a word no post holds
    assert all(known == 0 for known, _ in secret.values())
    # Once live, its words count (the vocabulary follows visibility, not only the index).
    assert live["/articles/launch/"][0] == 1.0
