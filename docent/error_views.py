"""Django's error handlers (config/urls.py): JSON under /api/, the site's pages elsewhere."""

from django.http import HttpRequest, HttpResponse
from django.views import csrf, defaults
from django.views.decorators.csrf import csrf_exempt

from blog import views as blog_views
from config.api_errors import (
    BAD_REQUEST,
    FORBIDDEN,
    NOT_FOUND,
    SERVER_ERROR,
    api_error_json,
    is_api_request,
)


@csrf_exempt  # any method: a POST without a token is still an unknown path, not a CSRF failure
def api_not_found(request: HttpRequest) -> HttpResponse:
    """Every /api/ path no route matches (config/urls.py): JSON with DEBUG on too, where
    Django's own 404 handling shows its debug page, not `handler404`."""
    return api_error_json(status=404, detail=NOT_FOUND)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return api_error_json(status=400, detail=BAD_REQUEST, code="bad_request")
    return blog_views.bad_request(request)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return api_error_json(status=403, detail=FORBIDDEN)
    return defaults.permission_denied(request, exception)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: the API's routes take no CSRF token (their writes are JSON
    from an allowed origin), but the docs and schema views are Django's and are checked."""
    if is_api_request(request):
        return api_error_json(status=403, detail=FORBIDDEN)
    return csrf.csrf_failure(request, reason)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return api_error_json(status=404, detail=NOT_FOUND)
    return blog_views.not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api_request(request):
        return api_error_json(status=500, detail=SERVER_ERROR, code="internal")
    return blog_views.server_error(request)
