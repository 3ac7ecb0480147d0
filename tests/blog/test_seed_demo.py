import pytest
from django.core.management import call_command

from blog.models import Article, Chunk, Tag
from blog.services import DEMO_DIR, demo_article_parse

pytestmark = pytest.mark.django_db


def test_seed_demo_loads_published_articles_in_two_languages():
    call_command("seed_demo")

    articles = Article.objects.published()
    assert articles.count() >= 12
    assert any("\u4e00" <= ch <= "\u9fff" for a in articles for ch in a.title)
    assert all(a.body.count("\n## ") >= 2 for a in articles)


def test_seed_demo_is_idempotent_and_respects_if_empty(make_article):
    call_command("seed_demo")
    count = Article.objects.count()
    call_command("seed_demo")
    assert Article.objects.count() == count

    Article.objects.all().delete()
    make_article(title="Mine")
    call_command("seed_demo", if_empty=True)
    assert list(Article.objects.values_list("title", flat=True)) == ["Mine"]


def test_every_demo_file_parses():
    for path in DEMO_DIR.glob("*.md"):
        demo = demo_article_parse(text=path.read_text(encoding="utf-8"))
        assert path.stem.endswith(demo.slug)


def test_seed_demo_remove_deletes_the_demo_articles_and_their_tags_only(make_article):
    call_command("seed_demo")
    mine = make_article(title="My first post", body="## Hello\n\nMine.")
    shared = Tag.objects.get(name="postgres")  # a demo tag the author uses too
    mine.tags.add(shared, Tag.objects.create(name="personal", slug="personal"))

    call_command("seed_demo", remove=True)

    assert list(Article.objects.values_list("title", flat=True)) == ["My first post"]
    assert set(Tag.objects.values_list("name", flat=True)) == {"postgres", "personal"}
    assert not Chunk.objects.exclude(article=mine).exists()
