"""Template tags for the admin's own pages."""

from django import template
from django.contrib.auth import get_user_model

register = template.Library()


@register.simple_tag
def admin_account_missing() -> bool:
    """True until someone can log into the admin: a first run has no account, and the login
    page is where a new user finds that out (the command is printed only at start-up)."""
    return not get_user_model().objects.filter(is_staff=True, is_active=True).exists()
