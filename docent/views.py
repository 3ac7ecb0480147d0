"""/healthz and /readyz for the proxy, the process manager and Kubernetes probes; the language
switch; the site's icon and manifest."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.views.decorators.csrf import csrf_exempt
from django.views.i18n import set_language

from blog.site import site_description, site_mark
from config.origins import origin_allowed
from docent.health import readiness

# The site's accent and page (static/site.css): the phone's browser bar and a home-screen app's
# splash.
THEME_COLOR = "#2f6f62"
BACKGROUND_COLOR = "#fbfaf7"


async def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and its event loop answers."""
    return JsonResponse({"ok": True})


async def readyz(request: HttpRequest) -> JsonResponse:
    """Send traffic here: the database and Redis answer and the process is not draining."""
    checks = await readiness()
    ready = all(checks.values())
    response = JsonResponse({"ready": ready, **checks}, status=200 if ready else 503)
    # A 503 here is the probe's answer, not a failed request: Django logged each at ERROR
    # ("Service Unavailable: /readyz", every few seconds per prober for a whole outage).
    # readiness() says it once, when it changes.
    response._has_been_logged = True
    return response


@csrf_exempt
def language_set(request: HttpRequest) -> HttpResponse:
    """Django's `set_language` for the header's English/中文 switch, which works without JS.

    No CSRF token: the pages stay free of per-visitor tokens (and cookies a shared cache could
    keep), and a forged post could only change a visitor's language. A browser's cross-site
    post still says where it came from, so a foreign Origin is refused.
    """
    origin = request.headers.get("Origin")
    host = request.get_host()
    if origin and not origin_allowed(origin=origin, scheme=request.scheme, host=host):
        refusal = "Cross-site language change refused."
        return HttpResponseForbidden(refusal, content_type="text/plain")
    return set_language(request)


def site_icon(request: HttpRequest) -> HttpResponse:
    """The tab's and the home screen's icon: the site's mark, the header's badge (the static
    icon read "D" on an owner's blog called anything else)."""
    mark = site_mark()
    response = render(
        request,
        "blog/icon.svg",
        {"mark": mark, "wide": not mark.isascii()},
        content_type="image/svg+xml",
    )
    # A day: SITE_NAME changes with a restart, and a browser asks for its icon on each page.
    patch_cache_control(response, public=True, max_age=86400)
    return response


def site_manifest(request: HttpRequest) -> JsonResponse:
    """The web app manifest: a phone's "Add to Home Screen" names the site and takes its mark
    (without one, Android's home screen showed a screenshot's corner and the page's title)."""
    manifest = {
        "name": settings.SITE_NAME,
        "short_name": settings.SITE_NAME,
        "description": site_description(),
        "start_url": "/",
        "display": "browser",
        "theme_color": THEME_COLOR,
        "background_color": BACKGROUND_COLOR,
        "icons": [{"src": reverse("site_icon"), "sizes": "any", "type": "image/svg+xml"}],
    }
    response = JsonResponse(manifest, json_dumps_params={"ensure_ascii": False})
    response["Content-Type"] = "application/manifest+json"
    patch_cache_control(response, public=True, max_age=86400)
    patch_vary_headers(response, ["Accept-Language", "Cookie"])  # the description's language
    return response
