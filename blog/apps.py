from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BlogConfig(AppConfig):
    name = "blog"
    verbose_name = _("Blog")

    def ready(self) -> None:
        from blog import signals  # noqa: F401  (connects the reindex-on-save receivers)
