"""The REST API: one ninja router per app, assembled here. Docs at /api/docs."""

import logging

from django.core.exceptions import ObjectDoesNotExist
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError
from ninja.parser import Parser

from agent.api import invalid_chat_request
from agent.api import router as agent_router
from agent.exceptions import SharedStateDown
from agent.frames import FrameError, json_parse
from blog.api import router as blog_router
from blog.embeddings import EmbeddingDimensionMismatch, EmbeddingError
from config.concurrency import CHAT_STREAM
from config.outage import RETRY_AFTER_SECONDS, outage_reason
from config.search_limit import shared_state_down_json
from ops.logs import log_text

logger = logging.getLogger(__name__)


class BoundedParser(Parser):
    """JSON bodies within the chat's size and depth limits, with text PostgreSQL can store."""

    def parse_body(self, request: HttpRequest):
        value = json_parse(request.body)
        if not isinstance(value, dict):
            # Every body the API takes is an object: ninja read `[1]`, `7` or `null` as `{}`,
            # and the chat answered "The message is empty" to a message that was never one.
            raise FrameError("The request body must be a JSON object.")
        return value


api = NinjaAPI(title="Docent API", version="1.0", urls_namespace="api", parser=BoundedParser())
api.add_router("/", agent_router)
api.add_router("/", blog_router)


# Domain exceptions become HTTP here, once, so endpoints stay free of status handling.
@api.exception_handler(ObjectDoesNotExist)
def not_found(request: HttpRequest, exc: ObjectDoesNotExist) -> HttpResponse:
    return api.create_response(request, {"detail": "Not found."}, status=404)


@api.exception_handler(EmbeddingError)
def search_unavailable(request: HttpRequest, exc: EmbeddingError) -> HttpResponse:
    # An endpoint's failure names its address and quotes its answer (a refused key, say): the
    # operator reads it in the log, the public API says only that search is down. A mismatched
    # index names no endpoint, only the command that fixes it.
    logger.warning("search is unavailable: %s", exc)
    if isinstance(exc, EmbeddingDimensionMismatch):
        detail = f"Search is unavailable: {exc}"
    else:
        detail = "Search is unavailable right now. Please try again later."
    return api.create_response(request, {"detail": detail}, status=503)


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    # As the pages do (config/outage.py): 503 with one log line, not a 500 with a traceback.
    path, reason = log_text(request.path), log_text(outage_reason(exc))  # the path is the client's
    logger.warning("database unavailable for %s: %s", path, reason)
    response = api.create_response(
        request, {"detail": "The database is unavailable right now. Please try again."}, status=503
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


@api.exception_handler(SharedStateDown)
def shared_state_down(request: HttpRequest, exc: SharedStateDown) -> HttpResponse:
    # A transcript read counts on Redis before it reads: refused while Redis is away (said
    # once per call by agent.shared), not a 500 with a traceback per request.
    return shared_state_down_json(exc)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja wraps a parser failure in a generic 400; the visitor should read why.
    if isinstance(exc.__cause__, FrameError):
        body = {"detail": str(exc.__cause__), "code": "bad_request"}
        return api.create_response(request, body, status=400)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Raised on to Django, as ninja does with DEBUG off. With DEBUG on ninja answered with a
    # traceback of its own (text/plain, a plain 500 answer), which neither carries the debug
    # pages' sentence nor reaches DebugPageGuard as an exception: every visitor behind a
    # proxy or tunnel read the stack, paths and SQL of any fault.
    raise exc


@api.exception_handler(ValidationError)
def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # The chat speaks its own protocol over SSE, as over the WebSocket: a malformed field is a
    # `bad_request` event there, not a 422 of pydantic's details. Every other route keeps 422.
    if request.path_info == CHAT_STREAM:
        return invalid_chat_request(exc.errors)
    return api.create_response(request, {"detail": exc.errors}, status=422)
