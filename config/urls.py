from django.contrib import admin
from django.urls import include, path, re_path
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from django.views.generic import RedirectView

from blog.site import site_admin_title
from config.api import api
from docent import error_views
from docent import views as docent_views
from docent.admin_order import apps_in_order
from ops.views import metrics

# The admin is Docent's back office: authors write there, admins review conversations.
admin.site.site_header = admin.site.site_title = lazy(site_admin_title, str)()
admin.site.index_title = _("Articles and conversations")
admin.site.get_app_list = apps_in_order(admin.site.get_app_list)

urlpatterns = [
    path("healthz", docent_views.healthz, name="healthz"),
    path("readyz", docent_views.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # After the API's routes: the rest of /api/ is a JSON 404, not the blog's page.
    re_path(r"^api/", error_views.api_not_found),
    path("metrics", metrics, name="metrics"),
    # Where django.conf.urls.i18n puts it; the header's switch posts here.
    path("i18n/setlang/", docent_views.language_set, name="set_language"),
    # The site's own mark (SITE_NAME's first letter), not a fixed "D".
    path("icon.svg", docent_views.site_icon, name="site_icon"),
    path("manifest.webmanifest", docent_views.site_manifest, name="site_manifest"),
    # Browsers ask for /favicon.ico whatever the page links (the admin's pages link none).
    # Not permanent: it led to the static "D" for good (that file stays for who cached it).
    path("favicon.ico", RedirectView.as_view(pattern_name="site_icon")),
    path("", include("blog.urls")),
]

# JSON under /api/, the site's pages elsewhere (docent/error_views.py).
handler400 = "docent.error_views.bad_request"
handler403 = "docent.error_views.permission_denied"
handler404 = "docent.error_views.not_found"
handler500 = "docent.error_views.server_error"
