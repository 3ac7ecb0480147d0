from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict:
    # No session here: reading pages must not write session rows. The chat's session key comes
    # with the page's cookie (config/middleware.py) and is saved on the first message.
    return {"site_name": settings.SITE_NAME}
