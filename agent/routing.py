"""WebSocket routes (the chat consumer is added by the live-chat work)."""

websocket_urlpatterns: list = []
