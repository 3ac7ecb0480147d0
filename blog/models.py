"""Articles and tags: what authors write and readers (and the assistant) read."""

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models, transaction
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField

from blog.reading import reading_minutes


class Tag(models.Model):
    name = models.CharField(_("name"), max_length=60, unique=True)
    slug = models.SlugField(_("slug"), max_length=60, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("tag")
        verbose_name_plural = _("tags")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("blog:tag", kwargs={"slug": self.slug})


def published_q(prefix: str = "") -> models.Q:
    """The one "published and visible" rule: published, and not scheduled for later.

    `prefix` names the relation from another model, e.g. `"article__"` for chunks or
    `"articles__"` for tags. `Now()` is the database clock, so the rule holds inside SQL.
    """
    return models.Q(
        **{f"{prefix}status": Article.Status.PUBLISHED, f"{prefix}published_at__lte": Now()}
    )


def scheduled_q() -> models.Q:
    """Published but scheduled for later: what `published_q` will let in as the clock passes
    each one's date, with no write to the database (blog.relevance.CHANGE_KEY_SQL watches it)."""
    return models.Q(status=Article.Status.PUBLISHED, published_at__gt=Now())


class ArticleQuerySet(models.QuerySet):
    def published(self) -> "ArticleQuerySet":
        """Articles a visitor may see (see `published_q`)."""
        return self.filter(published_q())


class Article(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        PUBLISHED = "published", _("Published")

    title = models.CharField(_("title"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=200, unique=True)
    summary = models.TextField(
        _("summary"), blank=True, help_text=_("One or two sentences for lists and search results.")
    )
    body = models.TextField(
        _("body"),
        help_text=_(
            "Markdown. Raw HTML is sanitized on display. An image shows as a link to the "
            "picture, named by its description: ![A diagram](https://…/diagram.png)."
        ),
    )
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.DRAFT, db_index=True
    )
    published_at = models.DateTimeField(
        _("published at"),
        null=True,
        blank=True,
        db_index=True,
        help_text=_(
            "Left empty, it is the moment you save as Published; a later date schedules the "
            "article. A draft has none: going back to draft clears it."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="articles", verbose_name=_("tags"))
    # An author who translated an article wrote a second one, and neither page led to the other.
    translation_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="translations",
        verbose_name=_("translation of"),
        help_text=_("The article this one translates: each page then links to the other."),
    )
    # Written by blog.indexing only (with queryset.update, so no signal loops back).
    indexed_at = models.DateTimeField(_("indexed at"), null=True, blank=True, editable=False)
    index_hash = models.CharField(max_length=64, blank=True, editable=False)
    # Counted from the body at each save (blog.reading), so a list of cards reads a column
    # instead of counting every body it shows.
    reading_minutes = models.PositiveSmallIntegerField(
        _("reading time (minutes)"), default=1, editable=False
    )

    objects = ArticleQuerySet.as_manager()

    class Meta:
        ordering = ["-published_at", "-id"]
        verbose_name = _("article")
        verbose_name_plural = _("articles")
        indexes = [
            # Every search reads the next scheduled post's date for the vocabulary's change key
            # (blog.relevance.CHANGE_KEY_SQL): one probe of this index. (It used to count the
            # visible articles from it: 0.95 ms of the server's CPU at 10,000 articles.)
            models.Index(
                fields=["published_at"],
                include=["id"],
                condition=models.Q(status="published"),
                name="article_visible_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        self.publication_date_settle()
        self.reading_minutes = reading_minutes(self.body)
        if (fields := kwargs.get("update_fields")) is not None and "body" in fields:
            kwargs["update_fields"] = {*fields, "reading_minutes"}
        with transaction.atomic():
            before, was_public = None, False
            if not self._state.adding:  # a new article had no address before
                old = Article.objects.filter(pk=self.pk).values("slug", "status", "published_at")
                if row := old.first():
                    before, was_public = row["slug"], Article(**row).is_public
            super().save(*args, **kwargs)
            self.former_slugs_settle(before=before, was_public=was_public)

    def get_absolute_url(self) -> str:
        return reverse("blog:article", kwargs={"slug": self.slug})

    def former_slugs_settle(self, *, before: str | None, was_public: bool) -> None:
        """Keep the address the article had, so it leads here (`article_detail` redirects): an
        edited slug turned every link to it, and every chat answer that cited it, into a 404.

        Another article's former address given out again is the new holder's once it shows
        there (public at a save, before or after it). Until then it stays a redirect (the view
        prefers an article the visitor may read): deleted at any save, a draft saved there
        turned the old address from a 301 into a 404 for everyone, telling them an unpublished
        article held it, and broke the old links for good. An article that leaves an address
        it never showed there (a draft renamed) leaves its redirect to the article that did.
        """
        holders = ArticleFormerSlug.objects.filter(slug=self.slug)
        # Shown there now, or until this save (a scheduled post that went live by the clock).
        shown = self.is_public or (was_public and before == self.slug)
        (holders if shown else holders.filter(article=self)).delete()
        if not before or before == self.slug:
            return
        if was_public:
            ArticleFormerSlug.objects.update_or_create(slug=before, defaults={"article": self})
        else:
            ArticleFormerSlug.objects.get_or_create(slug=before, defaults={"article": self})

    def publication_date_settle(self) -> None:
        """The date a save gives the article (the admin's preview shows it before a save)."""
        # Publishing without a date means "now"; keeps the public filter simple.
        if self.status == self.Status.PUBLISHED and self.published_at is None:
            self.published_at = timezone.now()
        # A draft has no publication date. An unpublished article kept its first one: the
        # admin's list said "Published Dec 4" beside "Draft", and publishing again brought it
        # back under that old date, below articles written since. Now it is dated when it
        # goes out again (the author may type the old date back in to keep it).
        if self.status == self.Status.DRAFT:
            self.published_at = None

    @property
    def is_public(self) -> bool:
        return (
            self.status == self.Status.PUBLISHED
            and self.published_at is not None
            and self.published_at <= timezone.now()
        )

    @property
    def is_scheduled(self) -> bool:
        """Published with a later date (`scheduled_q` for one article): public from that date."""
        return (
            self.status == self.Status.PUBLISHED
            and self.published_at is not None
            and self.published_at > timezone.now()
        )


class ArticleFormerSlug(models.Model):
    """An address an article had before its slug was edited; it redirects to the article."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="former_slugs")
    slug = models.SlugField(max_length=200, unique=True)
    changed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.slug


class Chunk(models.Model):
    """A retrieval-sized piece of a published article, with its embedding and lexemes."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    heading_path = models.CharField(max_length=500, blank=True)
    text = models.TextField(help_text="The chunk's Markdown, as shown in excerpts.")
    # Title, heading path and text, with Chinese runs spelled as character bigrams, because
    # PostgreSQL's parser cannot split Chinese words (see blog.chunking.lexical_text).
    lexical = models.TextField()
    search_vector = models.GeneratedField(
        expression=SearchVector("lexical", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS)
    # The article's language ("en", "zh"), so search can take vector candidates per language.
    language = models.CharField(max_length=8, blank=True, default="")
    embedding_model = models.CharField(max_length=200)
    content_hash = models.CharField(
        max_length=64, help_text="sha256 of model name + embedded text."
    )

    class Meta:
        ordering = ["article_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["article", "ordinal"], name="chunk_article_ordinal_uniq"
            )
        ]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # One graph per article language (blog.chunking.language_detect gives "en" or
            # "zh"), for the per-language candidate lists of blog.search. On the shared graph
            # a filter on the minority language made the scan walk past four chunks of the
            # other language for each one it kept; on its own graph it does not
            # (docs/benchmarks.md, search at scale).
            *(
                HnswIndex(
                    name=f"chunk_embedding_hnsw_{language}",
                    fields=["embedding"],
                    m=16,
                    ef_construction=64,
                    opclasses=["vector_cosine_ops"],
                    condition=models.Q(language=language),
                )
                for language in ("en", "zh")
            ),
            GinIndex(name="chunk_search_vector_gin", fields=["search_vector"]),
        ]

    def __str__(self) -> str:
        return f"{self.article_id}#{self.ordinal}"


class ReindexRun(models.Model):
    """One `manage.py reindex`: written as it starts, as each article is done, and as it ends.

    It runs in a process of its own, so the web processes' scrapes read it here
    (`ops.collectors.ReindexCollector`): before, nothing showed that one ran, how far it had
    got, or how it ended.
    """

    class Outcome(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        STOPPED = "stopped"

    started_at = models.DateTimeField(default=timezone.now)
    # Renewed after each article: a run whose process was killed stops renewing it.
    progress_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome, default=Outcome.RUNNING)
    full = models.BooleanField(default=False)
    articles_total = models.PositiveIntegerField(default=0)
    articles_scanned = models.PositiveIntegerField(default=0)
    articles_changed = models.PositiveIntegerField(default=0)
    chunks_embedded = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"reindex {self.started_at:%Y-%m-%d %H:%M} {self.outcome}"
