"""{{ call.error|stored_error }}: a stored error in the reviewer's language (agent.error_text)."""

from django import template

from agent.error_text import error_text

register = template.Library()


@register.filter
def stored_error(value: str) -> str:
    return error_text(stored=value or "")
