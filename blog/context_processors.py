from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict:
    # Every page carries the chat panel, and a conversation belongs to a session: make sure the
    # visitor has one before the WebSocket opens (a socket cannot set cookies).
    session = getattr(request, "session", None)
    if session is not None and not session.session_key:
        session["chat"] = True
    return {"site_name": settings.SITE_NAME}
