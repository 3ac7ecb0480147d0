"""Template tags for the admin's own pages."""

import re

from django import template
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeData, mark_safe

from config.middleware import local_viewer
from docent import selectors

register = template.Library()


@register.simple_tag(takes_context=True)
def admin_account_missing(context: template.Context) -> bool:
    """True until someone can log into the admin: a first run has no account, and the login
    page is where a new user finds that out (the command is printed only at start-up).

    Said only to this machine, judged as the debug pages judge it: anyone on the network learnt
    that the site was a fresh install with no account yet, and which command makes one. Judged
    by the peer's address alone (or said to anyone with DEBUG on), a proxy or tunnel on the same
    machine passed it on to every visitor, DEBUG off too.
    """
    request = context.get("request")
    if request is None or not local_viewer(request):
        return False
    return selectors.admin_account_missing()


@register.simple_tag(takes_context=True)
def admin_time_zone_meta(context: template.Context) -> str:
    """What static/admin/docent-time-zone.js needs: the zone this page's times are in, the
    cookie that names the browser's, and whether the page may be read again in it (a signed-in
    GET: reloading a POST's answer would send the form again)."""
    request = context.get("request")
    reload = bool(context.get("has_permission")) and getattr(request, "method", "") == "GET"
    return format_html(
        '<meta name="docent-time-zone" content="{}" data-cookie="{}" data-path="{}"'
        ' data-reload="{}">',
        timezone.get_current_timezone_name(),
        settings.ADMIN_TIME_ZONE_COOKIE_NAME,
        reverse("admin:index"),
        "true" if reload else "false",
    )


@register.simple_tag
def admin_time_zone() -> str:
    """The zone the admin's times are in, as the header names it: 'Asia/Shanghai (UTC+8)',
    'America/St_Johns (UTC-2:30)', 'UTC'."""
    name = timezone.get_current_timezone_name()
    if name == "UTC":
        return name
    minutes = round(timezone.localtime().utcoffset().total_seconds() / 60)
    hours, rest = divmod(abs(minutes), 60)
    offset = f"UTC{'-' if minutes < 0 else '+'}{hours}" + (f":{rest:02d}" if rest else "")
    return f"{name} ({offset})"


# A space after Chinese (full-width) punctuation: Django joins a message's sentences with one.
_SPACE_AFTER_FULL_WIDTH = re.compile(r"(?<=[。！？；：，）])[ \t]+")


@register.filter
def full_width_spacing(message) -> str:
    """A message without the space Django puts between its sentences when they end in '。'.

    Django writes "added successfully." + " " + "You may edit it again below.", so the Chinese
    admin read "已添加文章“…”。 可以在下方继续编辑。"; Chinese puts no space after a full stop.
    """
    raw = getattr(message, "message", message)  # a Message's own text keeps its safety
    text = _SPACE_AFTER_FULL_WIDTH.sub("", str(raw))
    return mark_safe(text) if isinstance(raw, SafeData) else text  # noqa: S308 (a space less)
