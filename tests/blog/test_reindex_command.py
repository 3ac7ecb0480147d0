import io

import pytest
from django.core.management import CommandError, call_command

from blog.embeddings import (
    EmbeddingDimensionMismatch,
    embedder_get,
    embedding_dimensions_stored,
)
from blog.models import Article, Chunk
from blog.search import article_search
from tests.blog.embeddings_server import eight_dimension_backend

pytestmark = pytest.mark.django_db

BODY = "Intro.\n\n## One\n\nFirst part.\n\n## Two\n\nSecond part.\n"


@pytest.fixture
def embedder():
    shared = embedder_get()
    shared.calls = shared.texts = 0
    return shared


@pytest.fixture
def two_articles(make_article):
    return make_article(title="Alpha", body=BODY), make_article(title="Beta", body="Just one.")


def reindex(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("reindex", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_reindex_prints_a_summary_and_a_second_run_embeds_nothing(two_articles, embedder):
    first, progress = reindex()
    calls = embedder.calls

    second, _ = reindex()

    assert first.startswith("Scanned 2 articles, 2 changed, 4 chunks embedded in ")
    assert "2/2" in progress  # the tqdm bar, on stderr
    assert second.startswith("Scanned 2 articles, 0 changed, 0 chunks embedded in ")
    assert embedder.calls == calls
    assert Chunk.objects.count() == 4


def test_dry_run_writes_nothing_and_says_what_it_would_do(two_articles, embedder):
    out, _ = reindex("--dry-run")

    assert out.startswith("Dry run: scanned 2 articles; 2 would be reindexed, 4 chunks embedded")
    assert Chunk.objects.count() == 0 and embedder.calls == 0


def test_one_article_by_slug(two_articles):
    out, _ = reindex("--article", "beta")

    assert out.startswith("Scanned 1 article, 1 changed, 1 chunk embedded")
    assert set(Chunk.objects.values_list("article__slug", flat=True)) == {"beta"}


def test_an_unknown_slug_is_a_clear_error():
    err = io.StringIO()
    with pytest.raises(CommandError, match="No article with the slug 'nope'"):
        call_command("reindex", "--article", "nope", stderr=err)
    assert err.getvalue() == ""  # no empty progress bar in front of the error


def test_the_progress_bar_knows_its_total_from_its_first_line(two_articles):
    _, progress = reindex()
    # Drawn before the total was known, it began "0article [00:00, ?article/s]".
    assert progress.lstrip("\r").startswith("  0%|          | 0/2 ")


def test_full_re_embeds_unchanged_articles(two_articles, embedder):
    reindex()
    embedder.texts = 0

    out, _ = reindex("--full")

    assert out.startswith("Scanned 2 articles, 2 changed, 4 chunks embedded")
    assert embedder.texts == 4


def test_batch_size_sets_the_texts_per_embedding_call(two_articles, embedder):
    reindex("--batch-size", "1")

    assert (embedder.calls, embedder.texts) == (4, 4)
    with pytest.raises(CommandError, match="at least 1"):
        reindex("--batch-size", "0")


def test_chunks_of_articles_unpublished_behind_the_signals_back_are_removed(two_articles):
    reindex()
    Article.objects.filter(slug="alpha").update(status=Article.Status.DRAFT)  # no signal

    out, _ = reindex()

    assert "(1 unpublished removed)" in out
    assert set(Chunk.objects.values_list("article__slug", flat=True)) == {"beta"}


@pytest.fixture
def eight_dim_backend():
    with eight_dimension_backend() as server:
        yield server


def test_a_dimension_mismatch_fails_clearly_until_reindex_full(two_articles, eight_dim_backend):
    with pytest.raises(CommandError, match=r"Run `python manage.py reindex --full`"):
        reindex()
    with pytest.raises(EmbeddingDimensionMismatch, match="384-dimension"):
        article_search(query="first part")
    assert eight_dim_backend.requests == []  # refused before any embedding call

    out, _ = reindex("--full")

    assert out.startswith("Scanned 2 articles, 2 changed, 4 chunks embedded")
    assert embedding_dimensions_stored() == 8
    assert article_search(query="First part.", min_relevance=0)[0].title == "Alpha"
