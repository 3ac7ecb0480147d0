"""From a question the blog could not answer to the form that writes its article."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from agent.text import shows_nothing
from blog.models import Article

register = template.Library()

TITLE_CHARS = Article._meta.get_field("title").max_length


@register.filter
def write_about_url(question: object) -> str:
    """The admin's "Add article" address with the question as its title, on one line, without
    the visitor's hidden characters.

    "Write about the top ones next" named no place to write: a new author looked for it.
    """
    # Whitespace is a space first: a newline is a control too, and must still part two words.
    spaced = " ".join(str(question or "").split())
    # Bidi overrides, zero-width spaces, tag characters, Hangul fillers, variation selectors:
    # a form field shows them as nothing (or obeys them), and a saved title carries them to a
    # public page.
    shown = "".join(c for c in spaced if not shows_nothing(c))
    title = " ".join(shown.split())[:TITLE_CHARS]
    return f"{reverse('admin:blog_article_add')}?{urlencode({'title': title})}"
