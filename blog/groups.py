"""The "Authors" group: what a staff account needs to write and publish, and nothing more.

An owner giving a colleague (or themselves, day to day) an account that is not a superuser
had to pick the blog's permissions one by one from the admin's list of sixty. Made once, at the
first migrate that finds it missing; an owner's later changes to it are left alone.
"""

from django.contrib.auth.models import Group, Permission

AUTHORS = "Authors"
AUTHOR_PERMISSIONS = [
    f"{action}_{model}"
    for model in ("article", "tag")
    for action in ("add", "change", "delete", "view")
]


def authors_group_ensure(**kwargs) -> None:
    """post_migrate receiver for the blog app: create the group with its permissions once."""
    group, created = Group.objects.get_or_create(name=AUTHORS)
    if created:
        group.permissions.set(
            Permission.objects.filter(
                content_type__app_label="blog", codename__in=AUTHOR_PERMISSIONS
            )
        )
