"""The REST API: one ninja router per app, assembled here. Docs at /api/docs."""

from django.core.exceptions import ObjectDoesNotExist
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from agent.api import router as agent_router
from blog.api import router as blog_router
from blog.embeddings import EmbeddingError

api = NinjaAPI(title="Docent API", version="1.0", urls_namespace="api")
api.add_router("/", agent_router)
api.add_router("/", blog_router)


# Domain exceptions become HTTP here, once, so endpoints stay free of status handling.
@api.exception_handler(ObjectDoesNotExist)
def not_found(request: HttpRequest, exc: ObjectDoesNotExist) -> HttpResponse:
    return api.create_response(request, {"detail": "Not found."}, status=404)


@api.exception_handler(EmbeddingError)
def search_unavailable(request: HttpRequest, exc: EmbeddingError) -> HttpResponse:
    return api.create_response(request, {"detail": f"Search is unavailable: {exc}"}, status=503)
