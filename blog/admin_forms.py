"""The article form of the authors' admin: what it fills in for an author, and what it refuses."""

from django import forms
from django.utils.translation import gettext_lazy as _

from blog.models import Article
from blog.rendering import markdown_too_deep
from blog.selectors import article_last_saved_by, article_slug_holder
from blog.services import article_slug_from_title
from docent.admin_dates import short_datetime

# The renderer keeps such a line as plain text (blog.rendering._within_depth), markers and all:
# nothing is lost, but the page would not look as the author meant.
TOO_DEEP = _(
    "Line %(line)s (“%(text)s”) is nested too deeply in lists or quotes for the page to show: "
    "it and what it holds would appear as plain text, list markers and all. Lists can go nine "
    "levels deep; nest this one less deeply."
)
# Django's "Article with this Slug already exists." named neither the article nor a way out.
SLUG_TAKEN = _(
    "The address /articles/%(slug)s/ is already taken by “%(title)s”. Choose another slug, "
    "for example %(free)s, or leave it empty to make one from the title."
)
# Two authors with one article open: the second to save silently undid the first's changes.
SAVED_SINCE = _(
    "%(who)s saved this article at %(when)s, after you opened it. Saving yours now would undo "
    "their changes, so nothing was saved. Open the article in a new tab to see their version, "
    "bring your changes over there, and save it."
)
SOMEONE = _("Someone else")
EMPTY_PUBLISHED = _(
    "A published article needs a body: the page would be empty and the assistant would have "
    "nothing to answer from. Write it, or save as a draft for now."
)


class ArticleForm(forms.ModelForm):
    """An empty slug is made from the title (a Chinese title's slug script leaves it empty);
    a taken slug is refused naming its article; a draft may have no body yet; a body nested
    deeper than the page can show is refused, naming its line."""

    # The article's last save as this form was opened (templates/admin/blog/article/
    # change_form.html): a save since, by another author, is refused rather than undone.
    opened_version = forms.CharField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Article
        fields = ["title", "slug", "summary", "body", "tags", "status", "published_at"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["opened_version"].initial = _version(self.instance)
        # A new author saving a title and a first thought got "This field is required." on
        # the body: a draft is where an article starts. Published ones still need it (clean).
        if "body" in self.fields:
            self.fields["body"].required = False

    def clean_body(self) -> str:
        body = self.cleaned_data["body"]
        if (deep := markdown_too_deep(body)) is None:
            return body
        params = {"line": deep.line, "text": deep.text}
        raise forms.ValidationError(TOO_DEEP, code="too_deep", params=params)

    def clean_slug(self) -> str:
        slug = self.cleaned_data.get("slug") or ""
        holder = slug and article_slug_holder(slug=slug, exclude_pk=self.instance.pk)
        if not holder:
            return slug
        free = article_slug_from_title(title=slug, exclude_pk=self.instance.pk)
        params = {"slug": slug, "title": holder, "free": free}
        raise forms.ValidationError(SLUG_TAKEN, code="unique", params=params)

    def clean(self) -> dict:
        data = super().clean()
        opened = data.get("opened_version")
        if self.instance.pk and opened and opened != _version(self.instance):
            who = article_last_saved_by(article=self.instance) or SOMEONE
            when = short_datetime(self.instance.updated_at)
            params = {"who": who, "when": when}
            raise forms.ValidationError(SAVED_SINCE, code="saved_since", params=params)
        if not data.get("slug") and data.get("title") and "slug" not in self.errors:
            data["slug"] = article_slug_from_title(title=data["title"], exclude_pk=self.instance.pk)
        # A body refused already (too deeply nested) is not an empty one.
        published = data.get("status") == Article.Status.PUBLISHED
        if published and "body" not in self.errors and not (data.get("body") or "").strip():
            self.add_error("body", forms.ValidationError(EMPTY_PUBLISHED, code="required"))
        return data


def _version(article: Article) -> str:
    """The article's last save, to the microsecond ("" for one not saved yet)."""
    return article.updated_at.isoformat() if article.pk and article.updated_at else ""
