"""Token counts as the admin shows them: the offline model's turns count none, and say so."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from agent.charts import format_count

register = template.Library()


@register.simple_tag
def token_count(count: int | None, counted: bool = True) -> SafeString:
    """`count` with thousands separators; "—" where no model counted any (`counted` False):
    the offline model's "0" read as a counter that was broken, or a turn that cost nothing."""
    if counted or count:
        return format_html("{}", format_count(count))
    title = gettext("The offline model counts no tokens.")
    return format_html('<span class="dc-no-tokens" title="{}">—</span>', title)
