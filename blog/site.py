"""What the blog says about itself: its name, its home page's heading and its description.

The demo's own words (a heading and a description of essays on tool-driven agents) stayed on the
home page, in every page's description and in the feed of a blog its author had made their own:
changing them meant editing templates. `SITE_TAGLINE` and `SITE_DESCRIPTION` replace them, as
written, in every language; unset, the demo's words are shown, translated.
"""

from django.conf import settings
from django.utils.translation import gettext


def site_tagline() -> str:
    """The home page's heading."""
    return settings.SITE_TAGLINE or gettext("Building assistants that only say what they can show")


def site_lede() -> str:
    """The sentence under the home page's heading."""
    return settings.SITE_DESCRIPTION or gettext(
        "Essays on tool-driven agents, streaming, Django Channels and pgvector. Ask the "
        "assistant anything about them; it answers from these articles and cites them."
    )


def site_description() -> str:
    """Every page's `<meta name="description">` unless the page has its own, and the feed's
    subtitle."""
    return settings.SITE_DESCRIPTION or gettext(
        "Notes on building tool-driven assistants with Django, PostgreSQL and pgvector."
    )


def site_mark() -> str:
    """The letter in the header's and the chat panel's badge: the name's first (it was D)."""
    return (settings.SITE_NAME.strip()[:1] or "D").upper()


def site_admin_title() -> str:
    """The admin's header and window title: the site's name (an owner's admin said "Docent")."""
    return gettext("%(name)s admin") % {"name": settings.SITE_NAME}
