"""The admin lists the blog first, then the assistant, the queue and the accounts."""

import pytest
from django.utils import translation

pytestmark = pytest.mark.django_db

ORDER = ["blog", "agent", "procrastinate", "auth"]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_index_lists_the_blog_first_in_every_language(staff_client, language):
    # Sorted by name, "Blog" came after "Authentication and authorization" in English.
    with translation.override(language):
        response = staff_client.get("/admin/", HTTP_ACCEPT_LANGUAGE=language)

    assert [app["app_label"] for app in response.context["app_list"]] == ORDER


def test_the_sidebar_of_a_list_page_keeps_the_same_order(staff_client):
    response = staff_client.get("/admin/agent/conversation/")

    assert [app["app_label"] for app in response.context["available_apps"]] == ORDER
    # The report pages still join the assistant's models (agent.admin_views.with_report_links).
    agent = response.context["available_apps"][1]
    assert "Unanswered" in [model["object_name"] for model in agent["models"]]
