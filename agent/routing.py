"""WebSocket routes; config/asgi.py wraps them in origin validation and the session stack."""

from django.urls import path

from agent.consumers import ChatConsumer

websocket_urlpatterns = [
    path("ws/chat/", ChatConsumer.as_asgi()),
]
