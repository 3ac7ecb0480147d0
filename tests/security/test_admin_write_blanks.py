"""Characters that show as nothing but are no control or format character stay out of a title.

Last round the "Write an article about this" link dropped controls and format characters
(bidi overrides, zero-width spaces, tag characters) from the question it puts in the article
form's title. A Hangul filler (U+3164) and the Braille blank (U+2800) are letters and symbols
that render as blank space, and a variation selector (U+FE0F), the combining grapheme joiner
(U+034F) and a Mongolian free variation selector (U+180B) are marks Unicode says to show as
nothing: all five passed, so the form's title held characters the editor could not see, and
saving it put them in a public page's title. The visitor asks over the chat socket of a live
daphne; a staff user follows the link through the real admin.
"""

import pytest
from django.contrib.auth import get_user_model

from tests.security.clients import admin_signed_in
from tests.security.test_admin_write_link import PAGES, visitor_asks, written_titles

pytestmark = pytest.mark.django_db(transaction=True)

BLANKS = "\u3164\u2800\ufe0f\u034f\u180b"
QUESTION = f"Tell me about quixo{BLANKS[0]}tron {BLANKS[1]}zorb{BLANKS[2:]}lax please"
SHOWN = "Tell me about quixotron zorblax please"


def test_write_an_article_link_leaves_blank_letters_and_ignorable_marks_out(serve):
    server = serve("admin-write-blanks")
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    visitor_asks(server, QUESTION)

    staff = admin_signed_in(server, username="editor", password="a-long-password")
    titles = {page: written_titles(staff, page) for page in PAGES}
    staff.close()

    # Before: "Tell me about quixo\u3164tron \u2800zorb\ufe0f\u034f\u180blax please".
    assert titles == {page: [SHOWN] for page in PAGES}
