from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BlogConfig(AppConfig):
    name = "blog"
    verbose_name = _("Blog")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from blog import signals  # noqa: F401  (connects the reindex-on-save receivers)
        from blog.groups import authors_group_ensure

        # After auth's own receiver has made the blog's permissions (auth is installed first).
        post_migrate.connect(authors_group_ensure, sender=self)
