from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = _("Assistant")
