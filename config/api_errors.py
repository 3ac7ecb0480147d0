"""The API's errors that no route answers, in JSON as its routes' are: `{"detail", "code"}`.

Django answers a path no route matches, and a fault no handler caught, with the site's error
pages, so `/api/nope` was the blog's HTML 404 and a client parsing JSON read a page of markup.
Under /api/ these answers are JSON with the same status; every other path keeps its page.
"""

from django.http import HttpRequest, JsonResponse

API_PREFIX = "/api/"

NOT_FOUND = "Not found."  # as a route answers a missing article (config/api.py)
METHOD_NOT_ALLOWED = "Method not allowed."  # as config.origins.ApiMethodsMiddleware says it
BAD_REQUEST = "Bad request."
FORBIDDEN = "Forbidden."
SERVER_ERROR = "Something went wrong on our side. Please try again."


def is_api_request(request: HttpRequest) -> bool:
    """The request is for the API (the path as sent: a script prefix does not hide it)."""
    return request.path_info.startswith(API_PREFIX) or request.path.startswith(API_PREFIX)


def api_error_json(*, status: int, detail: str, code: str | None = None) -> JsonResponse:
    """One API error: its words in `detail`, and `code` where the API names one."""
    body = {"detail": detail} if code is None else {"detail": detail, "code": code}
    response = JsonResponse(body, status=status)
    if status >= 500:
        response["Cache-Control"] = "no-store"  # a fault is not a page to keep
    return response
