import pytest
from django.contrib.auth import get_user_model

from blog.models import Article, Tag


@pytest.fixture
def make_article(db):
    """Create an article; published unless told otherwise."""

    def make(**fields) -> Article:
        tags = fields.pop("tags", [])
        fields.setdefault("title", "An article")
        fields.setdefault("slug", fields["title"].lower().replace(" ", "-"))
        fields.setdefault("body", "Some **body** text.")
        fields.setdefault("status", Article.Status.PUBLISHED)
        article = Article.objects.create(**fields)
        for name in tags:
            tag, _ = Tag.objects.get_or_create(name=name, defaults={"slug": name})
            article.tags.add(tag)
        return article

    return make


@pytest.fixture
def staff_client(client, db):
    user = get_user_model().objects.create_user(
        "editor", password="pw", is_staff=True, is_superuser=True
    )
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def _index_queue_idle_before_flush(_django_db_marker):
    """Stop background indexing of this test's articles before the database is reset.

    Depending on pytest-django's marker fixture makes this teardown run before its flush, so
    an indexing job never writes into (or locks tables of) the next test's database.
    """
    yield
    from blog.indexing import index_queue_discard, index_queue_wait

    index_queue_discard()  # nobody will search this test's articles again
    assert index_queue_wait(timeout=120), "background indexing did not finish"


@pytest.fixture(autouse=True)
def _search_vocabulary_fresh():
    """Each test has its own chunks; the cached vocabulary must not outlive them."""
    from blog.relevance import vocabulary

    vocabulary.invalidate()
    yield
    vocabulary.invalidate()
