"""A draft given an article's former address neither hides nor reveals itself there.

A published article renamed from `budgets` to `chat-budgets` leaves `/articles/budgets/`
redirecting to it. Saving a draft (or a post scheduled for later) at `budgets` deleted that
redirect: the address answered 404 from then on, so anyone watching it learned that an
unpublished article now held it, and every link to the old address broke for good, even if
the draft was later renamed or deleted (a draft renamed away took the address's redirect with
it). The redirect now stands until an article a visitor may read holds the address.
"""

import datetime as dt

import httpx
import pytest
from channels.db import database_sync_to_async

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def rename_then_reuse(**draft) -> None:
    from blog.models import Article

    article = Article.objects.create(
        title="Budgets", slug="budgets", summary="s", body="b", status=Article.Status.PUBLISHED
    )
    article.slug = "chat-budgets"
    article.save()
    Article.objects.create(title="Upcoming", slug="budgets", summary="s", body="b", **draft)


@database_sync_to_async
def upcoming_change(**fields) -> None:
    from blog.models import Article

    upcoming = Article.objects.get(title="Upcoming")
    for name, value in fields.items():
        setattr(upcoming, name, value)
    upcoming.save()


@database_sync_to_async
def delete_upcoming() -> None:
    from blog.models import Article

    Article.objects.filter(title="Upcoming").delete()


@pytest.mark.parametrize(
    "draft",
    [
        {"status": "draft"},
        {"status": "published", "published_at": dt.datetime(2999, 1, 1, tzinfo=dt.UTC)},
    ],
    ids=["draft", "scheduled"],
)
async def test_an_unpublished_article_at_a_former_address_leaves_its_redirect(serve, draft):
    await rename_then_reuse(**draft)
    server = serve("former-slug")

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        old = await client.get("/articles/budgets/")
        # Before: 404, "There is no page here", from the moment the draft was saved.
        assert (old.status_code, old.headers.get("location")) == (301, "/articles/chat-budgets/")
        assert "Upcoming" not in old.text

        if draft["status"] == "draft":
            # Renamed before it ever showed there, it leaves the redirect as it was.
            await upcoming_change(slug="upcoming-budgets")
            moved = await client.get("/articles/budgets/")
            assert moved.headers.get("location") == "/articles/chat-budgets/"
            # Published there, it holds the address.
            await upcoming_change(slug="budgets", status="published", published_at=None)
            now = await client.get("/articles/budgets/")
            assert now.status_code == 200 and "Upcoming" in now.text
        else:
            await delete_upcoming()  # never published: the old link still leads on
            gone = await client.get("/articles/budgets/")
            assert gone.headers.get("location") == "/articles/chat-budgets/"
