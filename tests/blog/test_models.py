"""The one "published and visible" rule, composed from articles, chunks and tags alike."""

from datetime import timedelta

import pytest
from django.utils import timezone

from blog.models import Article, Chunk, Tag, published_q, scheduled_q
from blog.selectors import tag_list_in_use

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(make_article):
    now = timezone.now()
    make_article(title="Live", tags=["search"], published_at=now - timedelta(days=1))
    make_article(title="Scheduled", tags=["later"], published_at=now + timedelta(days=1))
    make_article(title="Draft", tags=["hidden"], status=Article.Status.DRAFT)


def test_articles_tags_and_chunks_share_the_rule(three, settings):
    assert list(Article.objects.published().values_list("title", flat=True)) == ["Live"]
    assert list(Tag.objects.filter(published_q("articles__")).values_list("name", flat=True)) == [
        "search"
    ]
    assert [tag.name for tag in tag_list_in_use()] == ["search"]
    for article in Article.objects.all():
        Chunk.objects.create(
            article=article,
            ordinal=0,
            text=article.title,
            content_hash="h",
            embedding=[1.0] * settings.EMBEDDING_DIMENSIONS,
        )
    visible = Chunk.objects.filter(published_q("article__")).values_list("text", flat=True)
    assert list(visible) == ["Live"]


def test_a_draft_has_no_publication_date(make_article):
    article = make_article(title="Withdrawn")
    assert article.published_at is not None

    article.status = Article.Status.DRAFT
    article.save()

    article.refresh_from_db()
    assert article.published_at is None and not article.is_public


def test_is_scheduled_is_scheduled_q_for_one_article(three):
    scheduled = Article.objects.filter(scheduled_q()).values_list("title", flat=True)

    assert [a.title for a in Article.objects.all() if a.is_scheduled] == list(scheduled)
    assert list(scheduled) == ["Scheduled"]
