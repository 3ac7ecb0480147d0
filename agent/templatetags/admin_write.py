"""From a question the blog could not answer to the form that writes its article."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from blog.models import Article

register = template.Library()

TITLE_CHARS = Article._meta.get_field("title").max_length


@register.filter
def write_about_url(question: object) -> str:
    """The admin's "Add article" address with the question as its title, on one line.

    "Write about the top ones next" named no place to write: a new author looked for it.
    """
    title = " ".join(str(question or "").split())[:TITLE_CHARS]
    return f"{reverse('admin:blog_article_add')}?{urlencode({'title': title})}"
