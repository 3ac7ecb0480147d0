from django.apps import AppConfig


class DocentConfig(AppConfig):
    """Project-wide commands and operations (serve, release, health) that span blog and agent."""

    name = "docent"
