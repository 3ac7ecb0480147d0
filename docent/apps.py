from django.apps import AppConfig


class DocentConfig(AppConfig):
    """Project-wide commands and operations (serve, release, health) that span blog and agent."""

    name = "docent"

    def ready(self) -> None:
        from django.core.signals import request_finished

        from config.concurrency import connections_close_after_request

        request_finished.connect(connections_close_after_request, dispatch_uid="docent-db-close")
