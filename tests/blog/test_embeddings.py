import math
import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from blog.embeddings import (
    EmbeddingDimensionMismatch,
    EmbeddingError,
    LocalEmbedder,
    OpenAIEmbedder,
    embedder_get,
    embedding_dimensions_check,
    question_form,
)
from tests.blog.embeddings_server import EmbeddingsServer, scripted_vector


@pytest.fixture
def server():
    with EmbeddingsServer(dimensions=8) as running:
        yield running


def openai_embedder(server: EmbeddingsServer, **kwargs) -> OpenAIEmbedder:
    kwargs.setdefault("max_retries", 3)
    return OpenAIEmbedder(
        base_url=server.base_url,
        api_key="sk-test",
        model_name="scripted-embed",
        dimensions=server.dimensions,
        **kwargs,
    )


def test_openai_backend_batches_at_most_2048_inputs_per_request(server):
    embedder = openai_embedder(server)
    texts = [f"text {i}" for i in range(2500)]

    vectors = embedder.embed_passages(texts)

    assert [len(request["input"]) for request in server.requests] == [2048, 452]
    assert vectors[0] == scripted_vector("text 0", 8)  # answers re-sorted by index
    assert vectors[2499] == scripted_vector("text 2499", 8)
    assert embedder.calls == 2 and embedder.texts == 2500


def test_openai_backend_sends_model_key_and_optionally_dimensions(server):
    openai_embedder(server).embed_query("q")
    openai_embedder(server, send_dimensions=True).embed_query("q")

    first, second = server.requests
    assert first["model"] == "scripted-embed" and first["input"] == ["q"]
    assert "dimensions" not in first
    assert second["dimensions"] == 8
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


@override_settings(EMBEDDING_MAX_RETRY_WAIT=0.01)
def test_openai_backend_retries_a_429_and_a_503(server):
    server.fail(429, retry_after="0")
    server.fail(503)
    embedder = openai_embedder(server)

    vector = embedder.embed_query("hello")

    assert vector == scripted_vector("hello", 8)
    assert len(server.requests) == 3
    assert embedder.calls == 1


@override_settings(EMBEDDING_MAX_RETRY_WAIT=0.01)
def test_openai_backend_gives_up_after_bounded_retries(server):
    for _ in range(3):
        server.fail(429, retry_after="0")
    embedder = openai_embedder(server, max_retries=2)

    with pytest.raises(EmbeddingError, match="HTTP 429"):
        embedder.embed_query("hello")
    assert len(server.requests) == 3


def test_openai_backend_does_not_retry_a_client_error(server):
    server.fail(400)

    with pytest.raises(EmbeddingError, match="HTTP 400"):
        openai_embedder(server).embed_query("hello")
    assert len(server.requests) == 1


def test_openai_backend_rejects_vectors_of_the_wrong_width(server):
    embedder = OpenAIEmbedder(
        base_url=server.base_url, api_key="", model_name="m", dimensions=16, max_retries=0
    )

    with pytest.raises(EmbeddingError, match="EMBEDDING_DIMENSIONS is 16"):
        embedder.embed_query("hello")


def test_local_backend_is_multilingual_normalized_and_counts_calls():
    embedder = LocalEmbedder()

    query = embedder.embed_query("How does the HNSW index work?")
    passages = embedder.embed_passages(
        ["HNSW builds a layered graph of vectors.", "Rate limits return HTTP 429."]
    )
    chinese = embedder.embed_query("向量索引是怎么工作的？")

    assert len(query) == len(chinese) == embedder.dimensions == 384
    assert math.isclose(sum(x * x for x in query), 1.0, rel_tol=1e-4)
    similarity = [sum(q * p for q, p in zip(query, passage, strict=True)) for passage in passages]
    assert similarity[0] > similarity[1]
    assert (embedder.calls, embedder.texts) == (3, 4)


def test_embedder_get_follows_the_settings_and_caches_the_instance(server):
    assert isinstance(embedder_get(), LocalEmbedder)
    assert embedder_get() is embedder_get()
    with override_settings(
        EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=server.base_url, EMBEDDING_DIMENSIONS=8
    ):
        assert isinstance(embedder_get(), OpenAIEmbedder)
    with override_settings(EMBEDDING_BACKEND="nope"), pytest.raises(ImproperlyConfigured):
        embedder_get()


@pytest.mark.django_db
def test_dimension_mismatch_tells_the_operator_to_reindex_full(server):
    embedder = openai_embedder(server)  # 8 dimensions; the table holds 384

    with pytest.raises(EmbeddingDimensionMismatch) as caught:
        embedding_dimensions_check(embedder=embedder)

    assert "384" in str(caught.value) and "8" in str(caught.value)
    assert "manage.py reindex --full" in str(caught.value)
    embedding_dimensions_check(embedder=LocalEmbedder())  # the configured width passes


def test_a_long_query_does_not_hold_up_a_short_one():
    # Behind one engine lock a 500-character query (seconds of CPU) delayed every search in
    # the process; a question asked meanwhile now takes the second engine.
    import threading

    embedder = LocalEmbedder(engines=2)
    embedder.embed_query("warm up")  # one engine made and free
    long_query = "".join(chr(0x4E00 + (n * 37) % 20000) for n in range(500))
    long_one = threading.Thread(target=embedder.embed_query, args=(long_query,))
    long_one.start()
    while embedder.busy == 0:  # the long query holds an engine
        time.sleep(0.001)

    vector = embedder.embed_query("How does HNSW work?")
    still_running = long_one.is_alive()
    long_one.join()

    assert len(vector) == 384 and still_running


def test_an_engine_that_fails_to_load_does_not_leave_searches_waiting(monkeypatch):
    # A model file that cannot be mapped is not a fault a test can cause: the load is
    # replaced by one that fails once. The slot it took must be free for the next search.
    import blog.embeddings as embeddings

    real, failures = embeddings._engine_load, []

    def fails_once():
        if not failures:
            failures.append(1)
            raise OSError("cannot map the model file")
        return real()

    monkeypatch.setattr(embeddings, "_engine_load", fails_once)
    embedder = LocalEmbedder(engines=1)

    with pytest.raises(OSError):
        embedder.embed_query("first")
    vector = embedder.embed_query("second")  # waited for ever before: the one slot was taken

    assert len(vector) == 384


def test_warming_loads_the_model_before_the_first_search(monkeypatch):
    # After a restart the first visitor's search waited 2.5 s for the model (then 0.1 s).
    import blog.embeddings as embeddings
    from blog import commonness
    from docent import lifecycle

    embedder = LocalEmbedder()
    monkeypatch.setattr(embeddings, "embedder_get", lambda: embedder)
    monkeypatch.setattr(embeddings, "_counter", [])
    commonness.zipf.cache_clear()

    lifecycle.embedder_warm_quietly()

    assert (embedder.calls, embedder._made, embedder.busy) == (1, 1, 0)
    assert commonness.zipf.cache_info().currsize == 1  # the word list is read too
    assert embeddings._counter  # and the limits' token counter, weighed on the event loop


def test_a_model_that_fails_to_warm_is_logged_not_raised(monkeypatch, caplog):
    import blog.embeddings as embeddings
    from docent import lifecycle

    def broken():
        raise OSError("cannot map the model file")

    monkeypatch.setattr(embeddings, "embedder_get", broken)

    lifecycle.embedder_warm_quietly()

    assert "could not be loaded ahead of the first search" in caplog.text


def test_serve_warms_the_model_in_a_thread_once_the_loop_runs(monkeypatch, settings):
    settings.EMBEDDING_WARM_AT_START = True
    from docent import lifecycle

    scheduled = []
    monkeypatch.setattr(lifecycle.reactor, "callWhenRunning", scheduled.append)
    monkeypatch.setattr(lifecycle.reactor, "callInThread", scheduled.append)

    lifecycle.on_startup(worker=False)
    scheduled.pop(0)()

    assert scheduled == [lifecycle.embedder_warm_quietly]


def test_serve_leaves_the_model_for_the_first_search_when_warming_is_off(monkeypatch, settings):
    # The test suite's live servers: most never search, and each warm-up cost seconds of CPU.
    from docent import lifecycle

    settings.EMBEDDING_WARM_AT_START = False
    scheduled = []
    monkeypatch.setattr(lifecycle.reactor, "callWhenRunning", scheduled.append)
    monkeypatch.setattr(lifecycle.reactor, "callInThread", scheduled.append)

    lifecycle.on_startup(worker=False)

    assert scheduled == []


@pytest.mark.parametrize(
    "typed",
    [
        (
            "How does the HNSW index work",
            "How does the HNSW index work?",
            "How does the HNSW index work ?!",
        ),
        ("为什么要限制智能体的步数", "为什么要限制智能体的步数？", "为什么要限制智能体的步数?"),
    ],
)
def test_a_question_gets_one_vector_with_or_without_its_question_mark(typed):
    """e5 moves a vector with its end marks; the relevance bar was calibrated on questions."""
    embedder = LocalEmbedder()

    vectors = [embedder.embed_query(text) for text in typed]

    assert vectors[0] == vectors[1] == vectors[2]


def test_the_question_form_keeps_a_query_of_marks_only():
    assert question_form("How many steps") == "How many steps?"
    assert question_form("多少步。") == "多少步？"
    assert question_form("?") == "?"
