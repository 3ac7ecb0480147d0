"""From a question the blog could not answer to the form that writes its article."""

import unicodedata
from urllib.parse import urlencode

from django import template
from django.urls import reverse

from blog.models import Article

register = template.Library()

TITLE_CHARS = Article._meta.get_field("title").max_length
# Controls and format characters: bidi overrides and isolates, zero-width spaces and joiners,
# invisible tag characters. The admin labels them in visitor text, but a form field shows them
# as nothing (or obeys them), and a saved title carries them to a public page.
_HIDDEN = frozenset({"Cc", "Cf"})


@register.filter
def write_about_url(question: object) -> str:
    """The admin's "Add article" address with the question as its title, on one line, without
    the visitor's hidden characters.

    "Write about the top ones next" named no place to write: a new author looked for it.
    """
    # Whitespace is a space first: a newline is a control too, and must still part two words.
    spaced = " ".join(str(question or "").split())
    shown = "".join(c for c in spaced if unicodedata.category(c) not in _HIDDEN)
    title = " ".join(shown.split())[:TITLE_CHARS]
    return f"{reverse('admin:blog_article_add')}?{urlencode({'title': title})}"
