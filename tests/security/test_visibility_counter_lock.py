"""Red team 37: the vocabulary's change counter (blog migration 0013) under a long publish.

Every search reads the one counter row that the triggers on blog_article move. A transaction
that publishes (the admin's bulk publish, a script's UPDATE) holds that row's lock until it
commits. Nothing a visitor does writes blog_article, and a search only reads the row (MVCC,
no lock): a search during a publish of 300 articles held open is answered, nothing waits on
the lock, and the publish moves the counter once. Held on the first run (no hole found).
"""

import httpx
import psycopg
import pytest
from django.db import connection

from blog.models import Article
from testing_support.live_server import database_url
from tests.security.clients import published_indexed

pytestmark = pytest.mark.django_db(transaction=True)


def _changes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT changes FROM blog_visibility_changes")
        return cursor.fetchone()[0]


def _lock_waits() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_a_search_is_answered_while_a_bulk_publish_holds_the_counter(serve):
    published_indexed(title="Vector search", slug="vector-search", body="## pgvector\n\nHNSW.")
    Article.objects.bulk_create(
        Article(title=f"Draft {i}", slug=f"draft-{i}", body="b", status=Article.Status.DRAFT)
        for i in range(300)
    )
    server = serve("visibility-counter")
    before = _changes()

    with psycopg.connect(database_url(connection.settings_dict["NAME"])) as publisher:
        publisher.execute(  # the transaction stays open: the counter's row stays locked
            "UPDATE blog_article SET status = 'published', published_at = now() "
            "WHERE status = 'draft'"
        )
        with httpx.Client(base_url=server.url, timeout=30) as client:
            searched = client.get("/api/search", params={"q": "pgvector"})
            chat = client.get("/articles/vector-search/")
        waiting = _lock_waits()
        publisher.commit()

    assert searched.status_code == 200 and chat.status_code == 200
    assert waiting == 0
    assert _changes() == before + 1  # 300 articles, one statement: one move
