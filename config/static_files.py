"""Static files served by the app itself (`make run` has no proxy), refusing paths that escape.

Django's handler turns a missing file into a 404 but lets `SuspiciousFileOperation` through:
`/static/..%2fconfig/settings.py` (or a raw `..`) ended as daphne's "500 Internal Server
Error" and a traceback at ERROR in the log for every probe. Nothing was served, but a scanner
filled the error log and saw a 500 where a 400 belongs.
"""

import logging

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase

logger = logging.getLogger("django.security.static")


class StaticFilesHandler(ASGIStaticFilesHandler):
    """Django's ASGI static handler; a path outside the static root is a 400, not a 500."""

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return await super().get_response_async(request)
        except SuspiciousOperation as exc:
            # One line, not a traceback: a scanner sends these by the thousand.
            logger.warning("refused a static path: %s", exc)
            return HttpResponseBadRequest(b"Bad request.\n", content_type="text/plain")
