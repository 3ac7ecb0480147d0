"""Static files served by the app itself (`make run` has no proxy), refusing paths that escape.

Django's handler turns a missing file into a 404 but lets `SuspiciousFileOperation` through:
`/static/..%2fconfig/settings.py` (or a raw `..`) ended as daphne's "500 Internal Server
Error" and a traceback at ERROR in the log for every probe. Nothing was served, but a scanner
filled the error log and saw a 500 where a 400 belongs. A missing file was Django's technical
404 page with DEBUG on, for any client (this handler sits outside the middleware that keeps
debug pages to `make run`'s own user): now a plain 404. Outside the middleware, its answers also
lacked the pages' security headers (nosniff, CSP, X-Frame-Options): now they carry them.
A static file is read with GET or HEAD only: any other method (PUT, DELETE, a POST with a form)
was answered 200 with the file, where the cluster's nginx answers 405.
"""

import logging
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.http import (
    Http404,
    HttpRequest,
    HttpResponseBadRequest,
    HttpResponseBase,
    HttpResponseNotAllowed,
    HttpResponseNotFound,
)
from django.middleware.gzip import GZipMiddleware
from django.utils.module_loading import import_string

logger = logging.getLogger("django.security.static")
# One line per this many seconds, with how many were refused: a static request weighs a quarter
# of a page's under the request rate, so a scanner wrote 40 lines a second from one address.
REFUSALS_LOGGED_EVERY = 60.0
READ_METHODS = ["GET", "HEAD"]  # as nginx's static module: any other method is a 405


class StaticFilesHandler(ASGIStaticFilesHandler):
    """Django's ASGI static handler; a path outside the static root is a 400, not a 500."""

    def __init__(self, application) -> None:
        super().__init__(application)
        # The pages' own header middleware (settings.py), so the two cannot drift apart.
        self.headers = [
            import_string(path)(_no_response) for path in settings.SECURITY_HEADER_MIDDLEWARE
        ]
        self._refused, self._logged = 0, float("-inf")  # paths refused since the last line
        # Compressed for a browser that accepts it: chat.css and the panel's modules went out
        # whole (26 KB for the stylesheet alone) to a reader on a slow line. Static files hold
        # no secret and echo no input, so compressing them leaks nothing (pages stay as sent).
        self.gzip = GZipMiddleware(_no_response)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        response = await self._answer(request)
        if _worth_compressing(request.path, response):
            response = self.gzip.process_response(request, response)
        for middleware in self.headers:
            response = middleware.process_response(request, response)
        return response

    async def _answer(self, request: HttpRequest) -> HttpResponseBase:
        if request.method not in READ_METHODS:
            return HttpResponseNotAllowed(READ_METHODS, b"Method not allowed.\n", "text/plain")
        try:
            return await sync_to_async(self.serve, thread_sensitive=False)(request)
        except Http404:
            return HttpResponseNotFound(b"Not found.\n", content_type="text/plain")
        except SuspiciousOperation:
            # One line, not a traceback: a scanner sends these by the thousand. The path is
            # escaped, as Django escapes its own lines, and cut: the exception's text quoted it
            # raw, so a "%0a" in the URL wrote a forged line of the client's into the log (and
            # the text named the server's directories).
            self._refusal_log(request.path)
            return HttpResponseBadRequest(b"Bad request.\n", content_type="text/plain")

    def _refusal_log(self, path: str) -> None:
        """The first refusal at once, then one line per REFUSALS_LOGGED_EVERY with the count."""
        self._refused += 1
        now = time.monotonic()
        if now - self._logged < REFUSALS_LOGGED_EVERY:
            return
        count, self._refused, self._logged = self._refused, 0, now
        more = f" (and {count - 1} more since the last line)" if count > 1 else ""
        logger.warning("refused a static path%s: %s", more, _escaped(path))


# Text the site's own pages load, compressed per request: a type list and a size cap, so a
# 3.3 MB source map under /static/ninja/ (1.1 s of CPU to compress) or a PNG (made larger)
# is sent as it is.
COMPRESSED_TYPES = ("text/css", "text/javascript", "application/javascript", "image/svg+xml")
COMPRESSED_MAX_BYTES = 256 * 1024


def _worth_compressing(path: str, response: HttpResponseBase) -> bool:
    kind = response.get("Content-Type", "").split(";")[0].strip()
    size = int(response.get("Content-Length") or COMPRESSED_MAX_BYTES + 1)
    return kind in COMPRESSED_TYPES and size <= COMPRESSED_MAX_BYTES and not path.endswith(".map")


def _escaped(path: str, limit: int = 300) -> str:
    """`path` with control characters and non-ASCII as backslash escapes, at most `limit`."""
    return path[:limit].encode("unicode_escape").decode("ascii")


def _no_response(request: HttpRequest) -> None:
    """The header middleware only post-process here: nothing runs behind them."""
