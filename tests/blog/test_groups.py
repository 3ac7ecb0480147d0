"""An account that writes and publishes without being a superuser: the "Authors" group."""

import pytest
from django.contrib.auth.models import Group, Permission, User

from blog.groups import AUTHORS, authors_group_ensure
from blog.models import Article

pytestmark = pytest.mark.django_db


@pytest.fixture
def author_client(client):
    author = User.objects.create_user("ada", password="a long passphrase", is_staff=True)
    author.groups.add(Group.objects.get(name=AUTHORS))
    client.force_login(author)
    return client


def test_migrate_makes_an_authors_group_with_the_blogs_permissions_only():
    group = Group.objects.get(name=AUTHORS)

    codenames = set(group.permissions.values_list("content_type__app_label", "codename"))

    assert codenames == {
        ("blog", f"{action}_{model}")
        for model in ("article", "tag")
        for action in ("add", "change", "delete", "view")
    }


def test_an_author_writes_and_publishes_but_cannot_manage_accounts(author_client):
    response = author_client.post(
        "/admin/blog/article/add/",
        {"title": "My first post", "slug": "", "summary": "Hello.", "body": "## Hi\n\nText.",
         "status": "published", "published_at_0": "", "published_at_1": ""},
    )  # fmt: skip

    assert response.status_code == 302, response.content.decode()[:2000]
    assert Article.objects.published().get().title == "My first post"
    assert author_client.get("/admin/auth/user/").status_code == 403


def test_an_owners_changes_to_the_group_are_kept_at_the_next_migrate():
    group = Group.objects.get(name=AUTHORS)
    group.permissions.remove(Permission.objects.get(codename="delete_article"))

    authors_group_ensure()

    assert not group.permissions.filter(codename="delete_article").exists()
