"""The order of the admin's apps: what authors and reviewers come for first."""

from collections.abc import Callable

from django.http import HttpRequest

# Django sorts the apps by their translated names: in English the blog came last, under
# "Authentication and authorization" and "Background jobs", and an author opening the admin
# to write had to look for it; in Chinese the order was another one again.
APP_ORDER = ("blog", "agent", "procrastinate", "auth")

AppList = Callable[..., list[dict]]


def apps_in_order(get_app_list: AppList) -> AppList:
    """Wrap an AdminSite.get_app_list so the index and the sidebar list APP_ORDER's apps first,
    in that order, in every language; any other app follows as Django sorted it."""
    rank = {label: n for n, label in enumerate(APP_ORDER)}

    def app_list(request: HttpRequest, app_label: str | None = None) -> list[dict]:
        apps = get_app_list(request, app_label)
        return sorted(apps, key=lambda app: rank.get(app["app_label"], len(APP_ORDER)))

    return app_list
