"""An article's delete confirmation says which answers cite it (templates/admin/includes/
object_delete_summary.html): blog's admin cannot ask, since blog never imports agent."""

from collections.abc import Iterable

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from agent import selectors
from blog.models import Article

register = template.Library()


@register.simple_tag
def article_citations_note(articles: Article | Iterable[Article] | None) -> str:
    """One paragraph for the article(s) about to be deleted ("" when no answer cites them).

    An author deleting an article readers' answers cite was told only "Articles: 1".
    """
    ids = [articles.pk] if isinstance(articles, Article) else [a.pk for a in articles or []]
    citing = selectors.article_citing(article_ids=ids)
    if not citing.answers:
        return ""
    n = citing.answers
    if len(ids) == 1:
        counted = ngettext(
            "%(answers)s of the assistant’s answers cites this article",
            "%(answers)s of the assistant’s answers cite this article",
            n,
        )
    else:
        counted = ngettext(
            "%(answers)s of the assistant’s answers cites these articles",
            "%(answers)s of the assistant’s answers cite these articles",
            n,
        )
    rest = _(
        "Those answers keep their words; their links then lead readers to a page saying the "
        "article may have been withdrawn. To take an article off the site but keep it, set it "
        "back to Draft instead."
    )
    return format_html('<p class="dc-delete-cited">{}. {}</p>', counted % {"answers": n}, rest)
