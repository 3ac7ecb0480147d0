"""{% model_trouble_recent as model_trouble %}: the model endpoint failing its last turns, for
the admin's index (agent.selectors.model_trouble, as the dashboard shows it)."""

from datetime import timedelta

from django import template
from django.utils import timezone

from agent.selectors import ModelTrouble, model_trouble

register = template.Library()

# The dashboard's shortest period: an operator who signs in after a wrong key or model name
# read nothing on the index (readers were told the assistant was unavailable).
RECENT_DAYS = 7


@register.simple_tag(takes_context=True)
def model_trouble_recent(context: template.Context) -> ModelTrouble | None:
    """The endpoint's failure over the last week, for whoever may read conversations."""
    request = context.get("request")
    if request is None or not request.user.has_perm("agent.view_conversation"):
        return None
    return model_trouble(since=timezone.localdate() - timedelta(days=RECENT_DAYS))
