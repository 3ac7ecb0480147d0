"""ASGI entry point: HTTP through Django, WebSockets through Channels, both behind proxy trust."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Django must be set up before anything imports models (consumers, routing).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import re_path  # noqa: E402

from agent.routing import websocket_urlpatterns  # noqa: E402
from config.concurrency import HttpConcurrencyLimit, chat_stream  # noqa: E402
from config.origins import WebsocketOriginValidator  # noqa: E402
from config.proxy import TrustedProxyMiddleware  # noqa: E402
from config.request_rate import HttpRequestRate  # noqa: E402
from config.static_files import StaticFilesHandler  # noqa: E402
from config.websocket_limit import WebsocketConnectLimit  # noqa: E402
from config.websocket_sessions import websocket_auth_stack  # noqa: E402

# A socket to any other path is refused at the handshake (403): Channels' router raised
# "No route found", daphne answered 500 and logged a traceback for every probe.
websocket_routes = [*websocket_urlpatterns, re_path(r"", WebsocketDenier.as_asgi())]

# The address's request bucket, which a WebSocket handshake spends from as a request does; daphne's
# socket reads it too (docent/http_guard.py), to close a new connection that could only be refused.
request_rate = HttpRequestRate(
    ProtocolTypeRouter(
        {
            # Static files are served by the app itself so `make run` needs no proxy; they count
            # against the request cap too, at a fraction of a request each.
            "http": StaticFilesHandler(
                HttpConcurrencyLimit(
                    HttpConcurrencyLimit(
                        django_asgi_app,
                        total=settings.HTTP_REQUESTS_IN_FLIGHT,
                        per_client=settings.HTTP_REQUESTS_IN_FLIGHT_PER_IP,
                        per_network=settings.HTTP_REQUESTS_IN_FLIGHT_PER_NETWORK,
                    ),
                    total=settings.HTTP_CHAT_STREAMS_IN_FLIGHT,
                    per_client=settings.HTTP_CHAT_STREAMS_IN_FLIGHT_PER_IP,
                    per_network=settings.HTTP_CHAT_STREAMS_IN_FLIGHT_PER_NETWORK,
                    counts=chat_stream,
                    until_first_body=True,  # a stream holds its slot only until it starts
                )
            ),
            "websocket": WebsocketOriginValidator(
                WebsocketConnectLimit(websocket_auth_stack(URLRouter(websocket_routes)))
            ),
        }
    ),
    per_second=settings.HTTP_REQUESTS_PER_SECOND_PER_IP,
    burst=settings.HTTP_REQUEST_BURST_PER_IP,
    static=(settings.STATIC_URL, settings.HTTP_STATIC_REQUEST_WEIGHT),
    network=(
        settings.HTTP_REQUESTS_PER_SECOND_PER_NETWORK,
        settings.HTTP_REQUEST_BURST_PER_NETWORK,
    ),
    foreign_share=settings.HTTP_FOREIGN_REQUEST_SHARE,
)

# Client address and scheme are settled first (trusted proxies only), for every protocol.
application = TrustedProxyMiddleware(
    request_rate, settings.TRUSTED_PROXIES, settings.TRUSTED_PROXY_SECRET
)
