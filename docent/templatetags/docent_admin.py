"""Template tags for the admin's own pages."""

from django import template

from docent import selectors

register = template.Library()


@register.simple_tag
def admin_account_missing() -> bool:
    """True until someone can log into the admin: a first run has no account, and the login
    page is where a new user finds that out (the command is printed only at start-up)."""
    return selectors.admin_account_missing()
