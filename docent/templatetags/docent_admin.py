"""Template tags for the admin's own pages."""

from django import template
from django.conf import settings

from config.proxy import client_is_loopback
from docent import selectors

register = template.Library()


@register.simple_tag(takes_context=True)
def admin_account_missing(context: template.Context) -> bool:
    """True until someone can log into the admin: a first run has no account, and the login
    page is where a new user finds that out (the command is printed only at start-up).

    Said only to this machine (or with DEBUG on): anyone on the network learnt that the site
    was a fresh install with no account yet, and which command makes one.
    """
    request = context.get("request")
    address = request.META.get("REMOTE_ADDR", "") if request is not None else ""
    if not (settings.DEBUG or client_is_loopback(address)):
        return False
    return selectors.admin_account_missing()
