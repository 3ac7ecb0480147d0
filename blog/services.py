"""Writes for the blog."""

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify

from blog.models import Article, Tag

DEMO_DIR = Path(__file__).resolve().parent / "demo"


@dataclass(frozen=True)
class DemoArticle:
    title: str
    slug: str
    summary: str
    tags: list[str]
    published_at: dt.datetime
    body: str


def demo_article_parse(*, text: str) -> DemoArticle:
    """Parse a demo file: `---` front matter of `key: value` lines, then the Markdown body.

    Raises:
        ValueError: the front matter is missing or lacks a required key.
    """
    head, sep, body = text.removeprefix("---\n").partition("\n---\n")
    if not sep:
        raise ValueError("demo article has no front matter")
    meta = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    meta = {key.strip(): value.strip() for key, value in meta.items()}
    missing = {"title", "slug", "summary", "tags", "published_at"} - meta.keys()
    if missing:
        raise ValueError(f"demo article lacks {', '.join(sorted(missing))}")
    published = dt.datetime.fromisoformat(meta["published_at"])
    return DemoArticle(
        title=meta["title"],
        slug=meta["slug"],
        summary=meta["summary"],
        tags=[tag.strip() for tag in meta["tags"].split(",") if tag.strip()],
        published_at=published if published.tzinfo else published.replace(hour=9, tzinfo=dt.UTC),
        body=body.strip() + "\n",
    )


@transaction.atomic
def demo_articles_load(*, directory: Path = DEMO_DIR) -> tuple[int, int]:
    """Create or update the demo articles from `directory`, published.

    Returns:
        (created, updated) counts.
    """
    created = updated = 0
    for path in _demo_files(directory):
        demo = demo_article_parse(text=path.read_text(encoding="utf-8"))
        article, was_created = Article.objects.update_or_create(
            slug=demo.slug,
            defaults={
                "title": demo.title,
                "summary": demo.summary,
                "body": demo.body,
                "status": Article.Status.PUBLISHED,
                "published_at": demo.published_at,
            },
        )
        article.tags.set([tag_get_or_create(name=name) for name in demo.tags])
        created += was_created
        updated += not was_created
    return created, updated


@transaction.atomic
def demo_articles_remove(*, directory: Path = DEMO_DIR) -> int:
    """Delete the demo articles (their chunks go with them), and the tags only they carried.

    Returns:
        How many articles were deleted.
    """
    files = _demo_files(directory)
    slugs = [demo_article_parse(text=path.read_text(encoding="utf-8")).slug for path in files]
    articles = Article.objects.filter(slug__in=slugs)
    tags = list(Tag.objects.filter(articles__in=articles).distinct().values_list("pk", flat=True))
    removed = articles.count()
    articles.delete()
    Tag.objects.filter(pk__in=tags, articles__isnull=True).delete()
    return removed


def _demo_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.md"))


def tag_get_or_create(*, name: str) -> Tag:
    """The tag with this name, created with a slug on first use."""
    tag, _ = Tag.objects.get_or_create(name=name, defaults={"slug": slugify(name) or name})
    return tag


def article_slug_from_title(*, title: str, exclude_pk: int | None = None) -> str:
    """A free slug for an article whose author left it empty.

    The URL pattern takes ASCII slugs only, and Django's slugify drops Chinese characters, so
    a Chinese title became "article", "article-2", ...: addresses that said nothing and that
    depended on the order articles were written in. Chinese is spelled in pinyin instead
    ("文本嵌入入门" -> "wen-ben-qian-ru-ru-men"), which a Chinese reader reads as the title
    and which is the same whenever the title is. pypinyin (MIT, pure Python, no dependencies)
    knows the readings of phrases ("银行" is "yin-hang", not "yin-xing"); its dictionaries
    take about 40 MB and load on the first Chinese title only. The slug is made once, when the
    field is empty: an article's existing address never changes with its title or a new
    pypinyin.

    Args:
        title: the article's title.
        exclude_pk: the article being edited, whose own slug does not count as taken.
    Returns:
        The slug, unique among articles, at most 200 characters.
    """
    base = _slug_cut(slugify(_pinyin(title)), SLUG_FROM_TITLE_MAX) or "article"
    taken = set(
        Article.objects.filter(slug__startswith=base)
        .exclude(pk=exclude_pk)
        .values_list("slug", flat=True)
    )
    slug, number = base, 1
    while slug in taken:
        number += 1
        slug = f"{base}-{number}"
    return slug


# A slug made from a long title is cut at a word, so no syllable is left half spelled.
SLUG_FROM_TITLE_MAX = 100
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _pinyin(text: str) -> str:
    """The text with each Chinese character spelled in toneless pinyin, words apart."""
    if not _HAN.search(text):
        return text
    from pypinyin import Style, lazy_pinyin  # its dictionaries load here, on first use

    return " ".join(lazy_pinyin(text, style=Style.NORMAL, v_to_u=True, errors="default"))


def _slug_cut(slug: str, limit: int) -> str:
    if len(slug) <= limit:
        return slug
    cut = slug[: limit + 1].rsplit("-", 1)[0].strip("-")
    return cut if len(cut) <= limit else slug[:limit].strip("-")  # one word longer than all
