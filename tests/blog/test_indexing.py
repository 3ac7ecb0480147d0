import logging
import threading

import pytest
from django.test import override_settings

from blog import indexing
from blog.embeddings import LocalEmbedder, embedder_get
from blog.indexing import articles_reindex, chunk_reindex, index_queue_wait
from blog.models import Article, Chunk
from blog.search import article_search, article_search_text
from tests.blog.embeddings_server import EmbeddingsServer

BODY = (
    "Opening words about zeppelins.\n\n"
    "## Mooring\n\nA mast holds the airship in place.\n\n"
    "## Ballast\n\nWater ballast trims the ship.\n"
)


@pytest.fixture
def embedder():
    """The configured (local) embedder, with its call counters reset."""
    shared = embedder_get()
    shared.calls = shared.texts = 0
    return shared


def fetched(article: Article) -> Article:
    return Article.objects.get(pk=article.pk)


@pytest.mark.django_db
def test_reindex_writes_chunks_with_embeddings_lexemes_and_the_article_hash(make_article, embedder):
    article = make_article(title="Airships", body=BODY)

    result = chunk_reindex(article=fetched(article), embedder=embedder)

    chunks = list(Chunk.objects.filter(article=article).order_by("ordinal"))
    assert (result.changed, result.chunks, result.embedded) == (True, 3, 3)
    assert [c.heading_path for c in chunks] == ["", "Mooring", "Ballast"]
    assert chunks[1].text == "A mast holds the airship in place."
    assert chunks[1].lexical.startswith("Airships > Mooring")
    assert len(chunks[0].embedding) == 384 and chunks[0].embedding_model == embedder.model_name
    article.refresh_from_db()
    assert article.indexed_at is not None and len(article.index_hash) == 64


@pytest.mark.django_db
def test_a_second_reindex_of_unchanged_content_makes_no_embedding_calls(make_article, embedder):
    make_article(title="Airships", body=BODY)
    make_article(title="Balloons", body="Hot air rises.")
    first = articles_reindex(embedder=embedder)
    calls_after_first = embedder.calls

    second = articles_reindex(embedder=embedder)

    assert (first.scanned, first.changed, first.embedded) == (2, 2, 4)
    assert calls_after_first > 0
    assert (second.scanned, second.changed, second.embedded) == (2, 0, 0)
    assert embedder.calls == calls_after_first


@pytest.mark.django_db
def test_an_edit_re_embeds_only_the_changed_chunk(make_article, embedder):
    article = make_article(title="Airships", body=BODY)
    chunk_reindex(article=fetched(article), embedder=embedder)
    before = {c.ordinal: c.id for c in Chunk.objects.filter(article=article)}
    article.body = BODY.replace("Water ballast", "Sand ballast")
    article.save()
    embedder.texts = 0

    result = chunk_reindex(article=fetched(article), embedder=embedder)

    assert (result.changed, result.embedded, embedder.texts) == (True, 1, 1)
    after = {c.ordinal: c.id for c in Chunk.objects.filter(article=article)}
    assert set(after) == set(before) and not set(after.values()) & set(before.values())
    assert article_search_text(query="sand", limit=5)[0].title == "Airships"
    assert article_search_text(query="water", limit=5) == []


@pytest.mark.django_db
def test_unpublishing_removes_the_chunks(make_article, embedder):
    article = make_article(title="Airships", body=BODY)
    chunk_reindex(article=fetched(article), embedder=embedder)
    article.status = Article.Status.DRAFT
    article.save()

    result = chunk_reindex(article=fetched(article), embedder=embedder)

    assert result.removed and not Chunk.objects.filter(article=article).exists()
    assert fetched(article).index_hash == "" and fetched(article).indexed_at is None


@pytest.mark.django_db
def test_deleting_an_article_deletes_its_chunks(make_article, embedder):
    article = make_article(title="Airships", body=BODY)
    chunk_reindex(article=fetched(article), embedder=embedder)

    article.delete()

    assert Chunk.objects.count() == 0


@pytest.mark.django_db
def test_a_failed_embedding_leaves_the_old_chunks_in_place(make_article, embedder):
    article = make_article(title="Airships", body=BODY)
    chunk_reindex(article=fetched(article), embedder=embedder)
    old = list(Chunk.objects.filter(article=article).values_list("text", flat=True))
    Article.objects.filter(pk=article.pk).update(body="Entirely new text.")

    class Broken(LocalEmbedder):
        def embed_passages(self, texts):
            raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError):
        chunk_reindex(article=fetched(article), embedder=Broken())

    assert list(Chunk.objects.filter(article=article).values_list("text", flat=True)) == old


@pytest.mark.django_db
def test_saving_queues_the_job_after_commit_not_before(
    make_article, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        article = make_article(title="Airships", body=BODY)

    assert len(callbacks) == 1
    assert not Chunk.objects.exists()  # nothing happens until the commit
    callbacks[0]()  # the commit: still inside the test transaction, so the job runs inline
    assert Chunk.objects.filter(article=article).count() == 3


@pytest.mark.django_db
def test_a_failing_background_job_is_logged_not_raised(
    make_article, django_capture_on_commit_callbacks, caplog
):
    with (
        EmbeddingsServer(dimensions=384) as server,
        override_settings(
            EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=server.base_url, EMBEDDING_MAX_RETRIES=0
        ),
    ):
        server.fail(400)
        with caplog.at_level(logging.ERROR), django_capture_on_commit_callbacks(execute=True):
            article = make_article(title="Airships", body=BODY)

    assert f"reindexing article {article.pk} failed" in caplog.text
    assert not Chunk.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_edit_in_the_admin_updates_the_index_after_commit(staff_client):
    staff_client.post(
        "/admin/blog/article/add/",
        {"title": "Airships", "slug": "airships", "body": BODY, "status": "published"},
    )
    assert index_queue_wait(timeout=60)
    article = Article.objects.get(slug="airships")
    assert Chunk.objects.filter(article=article).count() == 3

    staff_client.post(
        f"/admin/blog/article/{article.pk}/change/",
        {
            "title": "Airships",
            "slug": "airships",
            "body": "Helium lifts the envelope.",
            "status": "published",
        },
    )
    assert index_queue_wait(timeout=60)

    assert [h.title for h in article_search_text(query="helium", limit=5)] == ["Airships"]
    assert article_search_text(query="ballast", limit=5) == []
    assert article_search(query="What lifts an airship?", limit=5)[0].title == "Airships"

    staff_client.post(
        f"/admin/blog/article/{article.pk}/change/",
        {"title": "Airships", "slug": "airships", "body": "x", "status": "draft"},
    )
    assert index_queue_wait(timeout=60)
    assert not Chunk.objects.exists()


@pytest.mark.django_db
def test_the_admin_shows_chunk_counts_and_index_state(staff_client, make_article, embedder):
    indexed = make_article(title="Indexed one", body=BODY)
    chunk_reindex(article=fetched(indexed), embedder=embedder)
    make_article(title="Waiting one")

    html = staff_client.get("/admin/blog/article/").content.decode()

    assert "Chunks" in html and "Index" in html
    assert 'class="field-chunk_count">3<' in html
    assert "up to date" in html and "pending" in html


@pytest.mark.django_db
def test_the_admin_action_reindexes_the_selected_articles(
    staff_client, make_article, django_capture_on_commit_callbacks
):
    article = make_article(title="Airships", body=BODY)

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            "/admin/blog/article/",
            {"action": "reindex_selected", "_selected_action": [article.pk]},
            follow=True,
        )

    assert "1 article(s) queued for reindexing" in response.content.decode()
    assert Chunk.objects.filter(article=article).count() == 3


@pytest.fixture
def stalled_queue(monkeypatch):
    """A fresh queue whose worker never takes a job, so queued jobs stay pending."""
    release = threading.Event()
    stalled = indexing._IndexQueue()
    monkeypatch.setattr(stalled, "_work", lambda: release.wait(10))
    monkeypatch.setattr(indexing, "_queue", stalled)
    yield stalled
    release.set()


def test_repeated_saves_of_one_article_queue_one_job(stalled_queue):
    for article_id in (1, 2, 1, 1):
        stalled_queue.put(article_id)

    assert stalled_queue._jobs.unfinished_tasks == 2
    assert not stalled_queue.wait(timeout=0.05)


@pytest.mark.django_db
def test_a_full_scan_drops_jobs_it_is_about_to_do_anyway(stalled_queue, make_article, embedder):
    article = make_article(title="Airships", body=BODY)
    stalled_queue._jobs.put(article.pk)  # as if saved just before, outside a transaction
    stalled_queue._pending[article.pk] = False

    articles_reindex(embedder=embedder)

    assert stalled_queue.wait(timeout=0.05)
    assert Chunk.objects.filter(article=article).count() == 3
