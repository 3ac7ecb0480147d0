"""While the database cannot be reached, a page says so: 503, in the reader's language.

With the database stopped, every page (the blog, an article, the admin) answered with Django's
yellow traceback under `make run` (DEBUG on) and "Server Error (500)" in production, and
logged a 50-line traceback per request. A database outage is not a bug in a page: the reader
is told the site is briefly unavailable and to try again, the operator reads one line.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from config.middleware import AsyncMiddleware, local_viewer
from ops.logs import log_text

logger = logging.getLogger(__name__)

# What the page and its Retry-After suggest: a restarted or failed-over database is back
# within about this long.
RETRY_AFTER_SECONDS = 30
# The errors of a database that cannot be reached (connection refused, closed, timed out);
# Django raises its own classes, wrapping psycopg's.
OUTAGE = (OperationalError, InterfaceError)


class DatabaseOutage(AsyncMiddleware):
    """Last in MIDDLEWARE, so its `process_exception` is asked first about a view's error."""

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        return await self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not isinstance(exception, OUTAGE):
            return None
        return database_unavailable_page(request, exception)


def outage_reason(exception: BaseException) -> str:
    """The error's first line ("connection is bad: … failed: No such file or directory")."""
    text = str(exception).strip()
    return text.splitlines()[0] if text else type(exception).__name__


def database_unavailable_page(request: HttpRequest, exception: BaseException) -> HttpResponse:
    """The 503 page; its reason is shown only to whoever runs this `make run` (DEBUG on)."""
    from django.conf import settings

    reason = outage_reason(exception)
    # Django's own "Service Unavailable: /path" after this line said it again, at ERROR, per
    # request; ops.logs.DatabaseDownFilter leaves it out for a request marked so.
    request.docent_database_down = True
    # The path is the client's: a "%0a" in it began a line of their own in the log.
    logger.warning("database unavailable for %s: %s", log_text(request.path), log_text(reason))
    context = {"reason": reason if settings.DEBUG and local_viewer(request) else ""}
    try:
        # The page touches no table: its template leaves the chat panel out.
        body = render_to_string("503.html", context, request=request)
        content_type = "text/html; charset=utf-8"
    except Exception:  # the error page must not fail in turn
        logger.exception("the database outage page failed to render")
        body, content_type = "The site is briefly unavailable. Please try again.", "text/plain"
    response = HttpResponse(body, status=503, content_type=content_type)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
