import contextlib
import io
import logging
from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.utils import timezone

from blog.embeddings import LocalEmbedder, embedder_get
from blog.indexing import articles_reindex, chunk_reindex, indexing_resume, indexing_stop
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
def test_the_model_reads_table_rows_spelled_out_while_full_text_keeps_the_table(
    make_article, embedder
):
    body = "## Fleet\n\n| Ship | Length |\n| --- | --- |\n| Hindenburg | 245 m |\n"
    article = make_article(title="Airships", body=body)

    chunk_reindex(article=fetched(article), embedder=embedder)

    chunk = Chunk.objects.get(article=article)
    spelled = "Airships > Fleet\n\nShip: Hindenburg; Length: 245 m."
    assert list(chunk.embedding) == pytest.approx(embedder.embed_passages([spelled])[0], abs=1e-5)
    assert "| Hindenburg | 245 m |" in chunk.lexical and "Ship:" not in chunk.lexical


@pytest.mark.django_db
def test_a_scan_stops_between_articles_on_shutdown_and_the_next_scan_does_the_rest(
    make_article, embedder
):
    for n in range(3):
        make_article(title=f"Airship {n}", body=BODY)

    def progress(step: int) -> None:
        if step == 1:  # the first article is done: the process is told to stop
            indexing_stop()

    try:
        stopped = articles_reindex(embedder=embedder, progress=progress)
    finally:
        indexing_resume()
    rest = articles_reindex(embedder=embedder)

    assert (stopped.scanned, stopped.changed) == (1, 1)
    assert (rest.scanned, rest.changed) == (3, 2)
    assert Chunk.objects.values("article").distinct().count() == 3


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
def test_saving_queues_one_job_in_the_saves_own_transaction(make_article, task_queue):
    article = make_article(title="Airships", body=BODY)
    article.body += "\nMore."
    article.save()  # a second save while the first job waits: covered by that job

    jobs = list(task_queue.jobs.values())
    assert [(j["task_name"], j["args"]) for j in jobs] == [
        ("blog.article_index", {"article_id": article.pk, "force": False})
    ]
    assert jobs[0]["queueing_lock"] == f"article-index-{article.pk}"
    assert not Chunk.objects.exists()  # nothing is indexed by the save itself


@pytest.mark.django_db(transaction=True)
def test_saving_a_draft_then_publishing_it_queues_one_job_and_misses_no_reindex(
    make_article, run_jobs, task_queue
):
    # A new draft's save queued a job with nothing to remove; it ran, and publishing queued a
    # second. Now only saves with something to index or to remove queue one.
    def index_jobs() -> list[dict]:
        return [j for j in task_queue.jobs.values() if j["task_name"] == "blog.article_index"]

    article = make_article(title="Airships", body=BODY, status=Article.Status.DRAFT)
    run_jobs()
    assert index_jobs() == []

    article.status = Article.Status.PUBLISHED
    article.save()
    run_jobs()
    assert len(index_jobs()) == 1 and Chunk.objects.filter(article=article).count() == 3

    article.body = "Helium lifts the envelope."  # an edit after publishing is indexed
    article.save()
    run_jobs()
    assert len(index_jobs()) == 2
    assert [h.title for h in article_search_text(query="helium", limit=5)] == ["Airships"]

    article.status = Article.Status.DRAFT  # unpublished: its chunks must go
    article.save()
    run_jobs()
    assert len(index_jobs()) == 3 and not Chunk.objects.exists()

    article.save()  # a draft again, nothing indexed: nothing to do
    assert len(index_jobs()) == 3


@pytest.mark.django_db(transaction=True)
def test_a_queued_job_indexes_the_article(make_article, run_jobs):
    article = make_article(title="Airships", body=BODY)

    finished = run_jobs()

    assert [j["status"] for j in finished if j["task_name"] == "blog.article_index"] == [
        "succeeded"
    ]
    assert Chunk.objects.filter(article=article).count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_failing_job_is_retried_by_the_queue(make_article, run_jobs, task_queue, caplog):
    """A failed attempt left no line (procrastinate logs retries at INFO, kept at WARNING) and
    the retries came 1 s apart (exponential_wait=1: 1 ** n), so a six-second outage of the
    embedding endpoint failed the job for good; only the last attempt logged, with a traceback.
    """
    with (
        EmbeddingsServer(dimensions=384) as server,
        override_settings(
            EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=server.base_url, EMBEDDING_MAX_RETRIES=0
        ),
    ):
        server.fail(400)
        article = make_article(title="Airships", body=BODY)
        with caplog.at_level(logging.WARNING, logger="blog.tasks"):
            run_jobs()
        (job,) = [j for j in task_queue.jobs.values() if j["task_name"] == "blog.article_index"]
        assert job["status"] == "todo" and job["attempts"] == 1  # scheduled again, not lost
        assert not Chunk.objects.exists()
        (line,) = [r for r in caplog.records if r.name == "blog.tasks"]
        assert line.levelno == logging.WARNING and line.exc_info is None
        assert line.getMessage() == (
            f"indexing article {article.pk} failed (attempt 1 of 6): EmbeddingError: embeddings "
            f"endpoint {server.base_url}/embeddings answered HTTP 400: "
            '{"error": {"message": "scripted failure"}}; tried again in 2 s'
        )

        caplog.clear()
        server.fail(500)
        job["attempts"], job["scheduled_at"] = 5, None  # the last attempt, due now
        with caplog.at_level(logging.WARNING, logger="blog.tasks"), _console() as console:
            run_jobs()
    assert job["status"] == "failed"
    # procrastinate's own ERROR line follows, without the traceback the line above made
    # redundant (it was 58 lines: the traceback through procrastinate, blog and httpx).
    (gave_up,) = [line for line in console.getvalue().splitlines() if "ended with status" in line]
    assert "ERROR procrastinate.worker: Job blog.article_index" in gave_up
    assert "Traceback" not in console.getvalue()
    (line,) = [r for r in caplog.records if r.name == "blog.tasks"]
    assert line.levelno == logging.ERROR and line.exc_info is None
    assert line.getMessage().startswith(
        f"indexing article {article.pk} failed for good after 6 attempts: EmbeddingError:"
    )
    assert "manage.py reindex" in line.getMessage()


@contextlib.contextmanager
def _console() -> Iterator[io.StringIO]:
    """What the site's console handler (settings.LOGGING, its filters) writes of procrastinate."""
    from ops.logs import ContextFormatter, SuspiciousRequestFilter

    site = next(
        handler
        for handler in logging.getLogger().handlers
        if any(isinstance(f, SuspiciousRequestFilter) for f in handler.filters)
    )
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(ContextFormatter("%(levelname)s %(name)s: %(message)s"))
    handler.filters = list(site.filters)
    logging.getLogger("procrastinate").addHandler(handler)
    try:
        yield written
    finally:
        logging.getLogger("procrastinate").removeHandler(handler)


def test_an_indexing_job_backs_off_for_a_minute_before_it_gives_up():
    from procrastinate.jobs import Job

    from blog.tasks import RETRY

    def wait(attempts: int) -> float | None:
        job = Job(
            id=1, queue="index", lock=None, queueing_lock=None, task_name="t", attempts=attempts
        )
        decision = RETRY.get_retry_decision(exception=RuntimeError(), job=job)
        return (
            None
            if decision is None
            else round((decision.retry_at - timezone.now()).total_seconds())
        )

    assert [wait(n) for n in range(6)] == [2, 4, 8, 16, 32, None]


@pytest.mark.django_db(transaction=True)
def test_an_edit_in_the_admin_updates_the_index_after_commit(staff_client, run_jobs):
    staff_client.post(
        "/admin/blog/article/add/",
        {"title": "Airships", "slug": "airships", "body": BODY, "status": "published"},
    )
    run_jobs()
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
    run_jobs()

    assert [h.title for h in article_search_text(query="helium", limit=5)] == ["Airships"]
    assert article_search_text(query="ballast", limit=5) == []
    assert article_search(query="What lifts an airship?", limit=5)[0].title == "Airships"

    staff_client.post(
        f"/admin/blog/article/{article.pk}/change/",
        {"title": "Airships", "slug": "airships", "body": "x", "status": "draft"},
    )
    run_jobs()
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
    assert "outdated" not in html


@pytest.mark.django_db
def test_the_admin_calls_an_index_from_another_embedding_model_outdated(
    staff_client, make_article, embedder
):
    # After EMBEDDING_MODEL changed, the list said "up to date" over vectors from the old model.
    article = make_article(title="Old vectors", body=BODY)
    chunk_reindex(article=fetched(article), embedder=embedder)
    Chunk.objects.filter(article=article).update(embedding_model="an-older-model")

    html = staff_client.get("/admin/blog/article/").content.decode()

    assert "outdated" in html and "up to date" not in html


@pytest.mark.django_db
def test_the_admin_action_queues_a_full_reindex_of_the_selected_articles(
    staff_client, make_article, task_queue
):
    article = make_article(title="Airships", body=BODY)
    task_queue.reset()

    response = staff_client.post(
        "/admin/blog/article/",
        {"action": "reindex_selected", "_selected_action": [article.pk]},
        follow=True,
    )

    assert "1 article queued for reindexing" in response.content.decode()
    (job,) = task_queue.jobs.values()
    assert job["args"] == {"article_id": article.pk, "force": True}


@pytest.mark.django_db
def test_a_reviewer_who_may_only_view_articles_cannot_queue_a_reindex(
    client, make_article, task_queue
):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    viewer = get_user_model().objects.create_user("viewer", password="a-long-password")
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.set(Permission.objects.filter(codename="view_article"))
    client.force_login(viewer)
    article = make_article(title="Airships", body=BODY)
    task_queue.reset()

    listed = client.get("/admin/blog/article/").content.decode()
    response = client.post(
        "/admin/blog/article/",
        {"action": "reindex_selected", "_selected_action": [article.pk]},
        follow=True,
    )

    assert "Reindex selected articles" not in listed  # no action menu offers it
    assert "queued for reindexing" not in response.content.decode()
    assert task_queue.jobs == {}


@pytest.mark.django_db(transaction=True)
def test_the_reindex_scan_job_indexes_what_changed(make_article, run_jobs, task_queue):
    from blog.indexing import reindex_scan_enqueue

    article = make_article(title="Airships", body=BODY)
    task_queue.reset()  # as if the save's own job were lost

    assert reindex_scan_enqueue() is True
    assert reindex_scan_enqueue() is False  # one scan waits at a time
    run_jobs()

    assert Chunk.objects.filter(article=article).count() == 3


@pytest.mark.django_db(transaction=True)
def test_an_authors_save_during_the_first_run_goes_ahead_of_the_demo_articles_left(
    make_article, run_jobs, task_queue, monkeypatch, capsys
):
    """The first run indexed the demo articles in one job holding the "index" lock (48 s): an
    article an author saved meanwhile waited for all of them."""
    from blog import indexing
    from blog.tasks import reindex_scan

    ran = []
    run = indexing.article_index_run
    monkeypatch.setattr(
        indexing, "article_index_run", lambda **kw: ran.append(kw["article_id"]) or run(**kw)
    )
    with indexing.article_saves_unqueued():  # loaded by the first run: its scan queues them
        demo = [make_article(title=f"Airship {n}", body=BODY) for n in range(3)]
    assert not task_queue.jobs

    reindex_scan(first_run=True)  # the scan's job, as the worker runs it
    authored = make_article(title="Balloons", body=BODY)  # an author saves meanwhile
    run_jobs()

    assert ran == [authored.pk, *(article.pk for article in demo)]
    assert Chunk.objects.values("article").distinct().count() == 4
    counts = [line for line in capsys.readouterr().err.splitlines() if "first run" in line]
    assert counts == [f"Indexing demo articles, first run only: {n}/3" for n in range(4)]
