from django.apps import AppConfig


class BlogConfig(AppConfig):
    name = "blog"

    def ready(self) -> None:
        from blog import signals  # noqa: F401  (connects the reindex-on-save receivers)
