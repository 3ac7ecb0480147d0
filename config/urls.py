from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from config.api import api
from docent import views as docent_views

urlpatterns = [
    path("healthz", docent_views.healthz, name="healthz"),
    path("readyz", docent_views.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # Browsers ask for /favicon.ico whatever the page links; send them to the real icon.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("", include("blog.urls")),
]

handler404 = "blog.views.not_found"
