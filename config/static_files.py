"""Static files served by the app itself (`make run` has no proxy), refusing paths that escape.

Django's handler turns a missing file into a 404 but lets `SuspiciousFileOperation` through:
`/static/..%2fconfig/settings.py` (or a raw `..`) ended as daphne's "500 Internal Server
Error" and a traceback in the log for every probe. Nothing was served, but a scanner could
fill the error log and see a 500 where a 400 belongs.
"""

from asgiref.sync import sync_to_async
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponseBase


class StaticFilesHandler(ASGIStaticFilesHandler):
    """Django's ASGI static handler; a path outside the static root is a 400, not a 500."""

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return await super().get_response_async(request)
        except SuspiciousOperation as exc:  # logged on django.security, answered 400
            answer = sync_to_async(response_for_exception, thread_sensitive=False)
            return await answer(request, exc)
