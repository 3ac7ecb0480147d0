"""/healthz and /readyz for the proxy, the process manager and Kubernetes probes."""

from django.http import HttpRequest, JsonResponse

from docent.health import readiness


async def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and its event loop answers."""
    return JsonResponse({"ok": True})


async def readyz(request: HttpRequest) -> JsonResponse:
    """Send traffic here: the database and Redis answer and the process is not draining."""
    checks = await readiness()
    ready = all(checks.values())
    return JsonResponse({"ready": ready, **checks}, status=200 if ready else 503)
