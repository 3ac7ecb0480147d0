"""The authors' admin: write, tag, publish; see how each article sits in the search index."""

import datetime as dt

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import flatten_fieldsets
from django.contrib.admin.widgets import AdminTextareaWidget
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import Script
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import URLPattern, path, reverse
from django.utils.cache import patch_cache_control
from django.utils.decorators import method_decorator
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeData, mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext, pgettext_lazy
from django.views.decorators.http import require_POST

from blog.admin_forms import ArticleForm
from blog.indexing import articles_index_enqueue
from blog.models import Article, Tag
from blog.selectors import (
    article_index_state,
    article_list_for_admin,
    article_preview_build,
    article_titled,
    tag_is_public,
    tag_list_for_admin,
)
from blog.views import article_page_render
from docent.admin_dates import FromNowFilter, short_datetime
from docent.admin_lookups import BoundedLookups

# An article's place in the search index (article_index_state): the list's short word, and the
# sentence its own page adds, since "Indexed at: —" alone left a new author guessing.
INDEX_STATES = {
    "draft": _("not indexed (draft)"),
    "pending": _("pending"),
    "outdated": _("outdated"),
    "up_to_date": _("up to date"),
    "failed": _("failed"),
}
INDEX_NOTES = {
    "draft": _("Drafts are not indexed: the assistant cannot answer from this article."),
    "pending": _(
        "Waiting to be indexed, usually for a few seconds; this line says when it is done. "
        "The assistant cannot answer from it yet."
    ),
    "outdated": _(
        "The last change is being indexed, usually within seconds; until then the assistant "
        "answers from the previous version."
    ),
    "up_to_date": _("The assistant answers from this version."),
    "failed": _(
        "Indexing failed, retries included; the assistant answers from the previous version, "
        "if any. It is tried again within ten minutes, or now with the list’s action "
        "“Reindex selected articles”."
    ),
}
# The states that change only when the author does something: the page stops asking.
INDEX_FINAL = {"draft", "up_to_date"}  # "failed" is retried within ten minutes: still asked


class PublishedWhenFilter(FromNowFilter):
    """When an article goes or went out: a scheduled post is under "Scheduled for later", a
    draft (no date) under "Not yet"."""

    title = _("published")
    parameter_name = "when"
    options = [
        ("scheduled", _("Scheduled for later")),
        ("week", _("In the past 7 days")),
        ("month", _("In the past 30 days")),
        ("earlier", _("Earlier")),
        ("none", _("Not yet (drafts)")),
    ]

    def ranges(self, now: dt.datetime) -> dict[str, dict]:
        week, month = now - dt.timedelta(days=7), now - dt.timedelta(days=30)
        return {
            "scheduled": {"published_at__gt": now},
            "week": {"published_at__gt": week, "published_at__lte": now},
            "month": {"published_at__gt": month, "published_at__lte": now},
            "earlier": {"published_at__lte": month},
            "none": {"published_at__isnull": True},
        }


class TagsFilter(admin.RelatedFieldListFilter):
    """The tags, and the articles with none under "No tags" rather than the bare "-" of an
    empty value, which read as a stray mark at the end of the list."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.empty_value_display = _("No tags")


class OwnRowsDeletion:
    """A delete confirmation lists the objects chosen, not the rows deleted with them.

    An article's search chunks and its tag links went in the list ("Chunk: 12#0", "Article-tag
    relationship: Article_tags object (26)"), untranslated in the Chinese admin, and neither is
    a thing an author made or can do anything about.
    """

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        own = str(self.model._meta.verbose_name_plural)
        deleted = [
            self._colon_localise(item)
            for item in deleted
            if not isinstance(item, list)  # lists: their rows
        ]
        counts = {name: count for name, count in counts.items() if str(name) == own}
        return deleted, counts, perms_needed, protected

    def _colon_localise(self, item: str) -> str:
        """Django's "文章: <a …>title</a>" (its colon is in code, not in a catalogue) with the
        colon the summary above it writes ("文章：…", templates/admin/includes)."""
        name = conditional_escape(capfirst(self.model._meta.verbose_name))
        head = f"{name}: "
        if not item.startswith(head):
            return item
        value = item[len(head) :]
        if not isinstance(item, SafeData):
            # Django escapes the line only for an object with a change page ("name: <a>…</a>");
            # for one without, the line is plain text, and marked safe its title would be HTML.
            value = conditional_escape(value)
        line = pgettext("a name and its value", "%(name)s: %(value)s")
        # Both parts are escaped now (Django's line or ours, the name above); a slice loses the
        # mark, so it is given back.
        return mark_safe(line % {"name": name, "value": value})  # noqa: S308


@admin.register(Tag)
class TagAdmin(BoundedLookups, OwnRowsDeletion, admin.ModelAdmin):
    # How much each tag is used: the list was names and slugs only, so a tag no article carries
    # any more looked as live as the busiest (agent/admin_tags.py adds its conversations).
    list_display = ["name", "slug", "article_total"]
    search_fields = ["name"]
    prepopulated_fields = {"slug": ["name"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tag]:
        return tag_list_for_admin(queryset=super().get_queryset(request))

    def view_on_site(self, tag: Tag) -> str | None:
        # A tag no published article carries has no page: "View on site" led a new tag to a 404.
        return tag.get_absolute_url() if tag_is_public(tag=tag) else None

    @admin.display(description=_("Articles"), ordering="article_count")
    def article_total(self, tag: Tag) -> str:  # not "articles": the relation has that name
        if not tag.article_count:
            return "0"
        url = reverse("admin:blog_article_changelist") + f"?tags__id__exact={tag.pk}"
        return format_html('<a href="{}">{}</a>', url, tag.article_count)


@admin.register(Article)
class ArticleAdmin(BoundedLookups, OwnRowsDeletion, admin.ModelAdmin):
    form = ArticleForm
    # Short dates and one-line states, so every column fits beside the filters at 1280 px.
    list_display = [
        "title",
        "status_shown",
        "published",
        "updated",
        "chunk_count",
        "indexed",
        "index_state",
    ]
    list_filter = ["status", ("tags", TagsFilter), PublishedWhenFilter]
    search_fields = ["title", "summary", "body"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["tags"]
    autocomplete_fields = ["translation_of"]  # a title typed, not a list of every article
    date_hierarchy = "published_at"
    fieldsets = [
        (None, {"fields": ["title", "slug", "summary", "body", "tags", "translation_of"]}),
        (_("Publishing"), {"fields": ["status", "published_at"]}),
        (_("Search index"), {"fields": ["index_status", "indexed"]}),
    ]
    # Dates written as the list writes them, not Django's "Dec. 4, …, a.m.".
    readonly_fields = ["index_status", "indexed"]
    actions = ["reindex_selected"]

    class Media:
        js = [
            Script("admin/docent-article-slug.js", type="module"),
            Script("admin/docent-index-state.js", type="module"),
        ]

    # The body is where an author writes; it opened as small as the one-line summary.
    TEXTAREAS = {
        "summary": {"rows": 3, "class": "vLargeTextField dc-article-summary"},
        "body": {"rows": 24, "class": "vLargeTextField dc-article-body", "spellcheck": "true"},
    }

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None and not self.has_change_permission(request, obj):
            # A reviewer who may only view read "Left empty, it is the moment you save as
            # Published…" and how to write an image under fields they cannot edit.
            fields = flatten_fieldsets(self.get_fieldsets(request, obj))
            kwargs["help_texts"] = dict.fromkeys(fields, "")
        return super().get_form(request, obj, change, **kwargs)

    def get_search_results(self, request, queryset, search_term):
        # The "translation of" box's suggestions match titles: matched on bodies too, "step
        # limits" offered first an article that only mentions them.
        if request.path == reverse("admin:autocomplete"):
            titled = queryset.filter(title__icontains=search_term.strip())
            return titled.order_by("title", "id"), False
        return super().get_search_results(request, queryset, search_term)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in self.TEXTAREAS:
            kwargs["widget"] = AdminTextareaWidget(attrs=self.TEXTAREAS[db_field.name])
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "tags":
            # Django's "Hold down Control, or Command on a Mac, to select more than one" is for
            # a plain list; the two boxes of filter_horizontal say how they work themselves.
            field.help_text = ""
        if db_field.name == "title":
            field.widget.attrs["class"] = "vTextField dc-article-title"
        if db_field.name == "slug":
            # Not required: ArticleForm fills an empty one in. (Help text is shown as HTML.)
            field.required = False
            field.help_text = _(
                "The end of the article’s address (/articles/sourdough-basics/): Latin "
                "letters, digits and hyphens. Left empty, it is made from the title when you "
                "save, Chinese spelled in pinyin (文本嵌入 gives wen-ben-qian-ru). It stays "
                "the same when the title changes later."
            )
            field.widget.attrs["placeholder"] = _("made from the title when you save")
        return field

    def get_urls(self) -> list[URLPattern]:
        preview = self.admin_site.admin_view(self.preview_view)  # staff only, CSRF-checked
        state = self.admin_site.admin_view(self.index_state_view)
        return [
            path("preview/", preview, name="blog_article_preview"),
            path("<path:object_id>/index-state/", state, name="blog_article_index_state"),
            *super().get_urls(),
        ]

    @method_decorator(require_POST)
    def preview_view(self, request: HttpRequest) -> HttpResponse:
        """The article form's content as its page on the site, before (or without) a save.

        The form's Preview button posts the form here, into a tab of its own; the page is the
        public one (blog.views.article_page_render: its template, renderer and sanitiser).
        """
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
            raise PermissionDenied
        form = self.get_form(request)(request.POST)
        form.is_valid()  # a slug already taken, say, must not keep the author from a preview
        cleaned = getattr(form, "cleaned_data", {})
        article, tags = article_preview_build(
            title=request.POST.get("title", ""),
            summary=request.POST.get("summary", ""),
            body=request.POST.get("body", ""),
            status=cleaned.get("status") or Article.Status.DRAFT,
            published_at=cleaned.get("published_at"),
            tags=cleaned.get("tags") or [],
        )
        # The body would not save as it is: the author reads why beside what the page makes of it.
        problems = form.errors["body"] if form.has_error("body", "too_deep") else []
        response = article_page_render(
            request, article=article, tags=tags, preview=True, problems=problems
        )
        patch_cache_control(response, private=True, no_store=True)
        return response

    def get_queryset(self, request):
        # The changelist never needs bodies; chunk counts come in the same query.
        return article_list_for_admin(articles=super().get_queryset(request))

    # A post with a later date read "Published" and "up to date" like the others: its author
    # asked the assistant about it and was told the blog had nothing (walk 24).
    @admin.display(description=_("Status"), ordering="status")
    def status_shown(self, article: Article) -> str:
        if article.is_scheduled:
            return format_html(
                '<span title="{}">{}</span>',
                _scheduled_note(article),
                pgettext("an article's status", "Scheduled"),
            )
        return article.get_status_display()

    # The column of dates, not the status "Published" (both read "已发布" in Chinese).
    @admin.display(
        description=pgettext_lazy("a column of dates", "Published"), ordering="published_at"
    )
    def published(self, article: Article) -> str:
        return short_datetime(article.published_at)

    @admin.display(description=_("Updated"), ordering="updated_at")
    def updated(self, article: Article) -> str:
        return short_datetime(article.updated_at)

    @admin.display(description=_("Indexed at"), ordering="indexed_at")
    def indexed(self, article: Article) -> str:
        # A draft's chunks go with the job its save queued, which clears the date only then;
        # "draft" is a final state the page does not ask again about, so until a reload it read
        # "not indexed (draft)" above the old "Indexed at: Dec 4 2026, 19:57".
        if article.status != Article.Status.PUBLISHED:
            return short_datetime(None)
        return short_datetime(article.indexed_at)

    @admin.display(description=_("Chunks"), ordering="chunk_count")
    def chunk_count(self, article: Article) -> int:
        return article.chunk_count

    @admin.display(description=_("Index"))
    def index_state(self, article: Article) -> str:
        return INDEX_STATES[article_index_state(article=article)]

    @admin.display(description=_("Index"))
    def index_status(self, article: Article) -> str:
        if article.pk is None:  # the add form: nothing saved, nothing to index yet
            return _("Indexed in the background once the article is saved as Published.")
        # docent-index-state.js asks index_state_view again while the state is not final.
        state = article_index_state(article=article, detail=True)
        return format_html(
            '<span class="dc-index" data-state="{}" data-final="{}" data-url="{}">{}</span>',
            state,
            "true" if state in INDEX_FINAL else "false",
            reverse("admin:blog_article_index_state", args=[article.pk]),
            self._index_status_text(article, state),
        )

    def _index_status_text(self, article: Article, state: str) -> str:
        note = INDEX_NOTES[state]
        if state not in ("draft", "failed") and not article.is_public:
            note = _scheduled_note(article)
        return format_html(
            '<strong class="dc-index-state">{}</strong> · {}', INDEX_STATES[state], note
        )

    def index_state_view(self, request: HttpRequest, object_id: str) -> JsonResponse:
        """The article page's "Search index" line, for its script to update without a reload."""
        article = self.get_object(request, object_id)
        if article is None or not self.has_view_or_change_permission(request, article):
            raise PermissionDenied
        state = article_index_state(article=article, detail=True)
        response = JsonResponse(
            {
                "state": state,
                "final": state in INDEX_FINAL,
                "html": self._index_status_text(article, state),
                "indexed": self.indexed(article),
            }
        )
        patch_cache_control(response, private=True, no_store=True)
        return response

    # "Added successfully" alone left a new author asking when the assistant would know; the
    # note follows Django's own message (added after it).
    def response_add(
        self, request: HttpRequest, obj: Article, post_url_continue: str | None = None
    ) -> HttpResponse:
        response = super().response_add(request, obj, post_url_continue)
        self.message_user(request, _index_note(obj), messages.INFO)
        self._warn_same_title(request, obj)
        return response

    def response_change(self, request: HttpRequest, obj: Article) -> HttpResponse:
        response = super().response_change(request, obj)
        self.message_user(request, _index_note(obj), messages.INFO)
        self._warn_same_title(request, obj)
        if getattr(obj, "unpublished_from", None):
            # Article.save cleared the date; say which it was, since the form no longer shows it.
            self.message_user(request, _unpublished_note(obj.unpublished_from), messages.INFO)
        return response

    def _warn_same_title(self, request: HttpRequest, obj: Article) -> None:
        # Two articles of one title read as one in the list, the search results and the
        # assistant's citations; nothing told the author (a walk through the admin left three).
        others = article_titled(title=obj.title, exclude_pk=obj.pk)
        if others:
            message = ngettext(
                "Another article has the same title (%(slugs)s): readers will not tell them "
                "apart in the list, in search results or in the assistant’s citations.",
                "%(count)d other articles have the same title (%(slugs)s): readers will not "
                "tell them apart in the list, in search results or in the assistant’s citations.",
                len(others),
            ) % {"count": len(others), "slugs": ", ".join(others[:5])}
            self.message_user(request, message, messages.WARNING)

    def save_model(
        self, request: HttpRequest, obj: Article, form: forms.ModelForm, change: bool
    ) -> None:
        was_public_from = form.initial.get("published_at") if change else None
        was_published = form.initial.get("status") == Article.Status.PUBLISHED
        super().save_model(request, obj, form, change)
        if was_published and obj.status == Article.Status.DRAFT:
            obj.unpublished_from = was_public_from

    # Editors' only: a reviewer who may only view articles queued full reindexes (re-embedding
    # every selected article, minutes of CPU) from the list's action menu.
    @admin.action(description=_("Reindex selected articles"), permissions=["change"])
    def reindex_selected(self, request: HttpRequest, queryset: QuerySet[Article]) -> None:
        count = articles_index_enqueue(
            article_ids=queryset.values_list("pk", flat=True), force=True
        )
        self.message_user(
            request,
            ngettext(
                "%(count)s article queued for reindexing; the index updates in the background.",
                "%(count)s articles queued for reindexing; the index updates in the background.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )


def _index_note(article: Article) -> str:
    """What happens next in the search index, for the message after a save."""
    if article.status != Article.Status.PUBLISHED:
        # Said on every save of a draft, an unpublished article included: it left the site too.
        return _(
            "A draft is not on the public site and the assistant does not answer from it: set "
            "the status to Published for both."
        )
    if not article.is_public:
        # Published with a later date: indexed now, but the search keeps to published_q, so
        # the assistant cannot find it before that date.
        return _scheduled_note(article)
    return _(
        "The assistant can answer from it once it is indexed, usually within seconds: its "
        "“Search index” section and the list’s Index column then say “up to date”."
    )


def _scheduled_note(article: Article) -> str:
    return _("Scheduled for %(date)s: the assistant can answer from it from then on.") % {
        "date": short_datetime(article.published_at)
    }


def _unpublished_note(date: dt.datetime) -> str:
    return _(
        "Its publication date, %(date)s, was cleared: published again, it is dated from then. "
        "To keep the old date, type it back in when you publish."
    ) % {"date": short_datetime(date)}
