"""GET /metrics: the Prometheus text format, for scrapers on trusted networks or with the token."""

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from config.proxy import PROXY_HEADERS, UNTRUSTED_FORWARD, address_unmapped
from ops import multiproc
from ops.collectors import scrape_registry


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponse("Forbidden\n", status=403, content_type="text/plain")
    registry = multiproc.registry()
    body = generate_latest(registry) + generate_latest(scrape_registry())
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def metrics_allowed(request: HttpRequest) -> bool:
    """The bearer token when one is configured, or a client on a trusted network.

    A request that came through a proxy (it names a forwarded client) is judged by every
    address it names too: the proxy itself talks from loopback, the visitor does not.
    """
    if token_given(request.headers.get("Authorization", "")):
        return True
    if (getattr(request, "scope", None) or {}).get(UNTRUSTED_FORWARD):
        return False  # through a proxy that is not trusted: the real client is unknown
    addresses = [request.META.get("REMOTE_ADDR", "")]
    forwarded = (
        request.headers.get("X-Forwarded-For", "") + "," + request.headers.get("X-Real-IP", "")
    )
    addresses += [part.strip() for part in forwarded.split(",") if part.strip()]
    # Forwarded (RFC 7239) is not parsed here, and Via or a CDN's client header names no
    # address: a proxy passed the request on for someone unknown. Refuse rather than guess.
    if any(request.META.get(name) for name in PROXY_HEADERS if name != "HTTP_X_REAL_IP"):
        return False
    return all(address_trusted(address) for address in addresses)


def token_given(authorization: str) -> bool:
    """The header carries METRICS_TOKEN (when one is configured)."""
    token = settings.METRICS_TOKEN
    expected = f"Bearer {token}".encode()
    return bool(token) and hmac.compare_digest(authorization.encode(), expected)


def address_trusted(address: str) -> bool:
    try:  # a server on `::` sees an IPv4 scraper as ::ffff:a.b.c.d: judged as a.b.c.d
        ip = address_unmapped(ipaddress.ip_address(address.strip("[]")))
    except ValueError:
        return False
    allowed = settings.METRICS_ALLOWED_NETWORKS
    networks = (ipaddress.ip_network(net, strict=False) for net in allowed)
    return any(ip.version == net.version and ip in net for net in networks)
