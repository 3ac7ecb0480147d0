from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import get_language

from blog.language import chinese_variant, html_lang
from blog.site import site_description, site_lede, site_mark, site_tagline


def site(request: HttpRequest) -> dict:
    # No session here: reading pages must not write session rows. The chat's session key comes
    # with the page's cookie (config/middleware.py) and is saved on the first message.
    chinese = chinese_variant(
        current=get_language() or "", accept=request.META.get("HTTP_ACCEPT_LANGUAGE", "")
    )
    # The language switches' 中文 (base.html, the panel, the admin): which Chinese, and whether
    # it is the one shown.
    return {
        "site_name": settings.SITE_NAME,
        "site_mark": site_mark(),
        # Read by the home page and the head only: lazy, so other pages translate nothing.
        "site_tagline": site_tagline,
        "site_lede": site_lede,
        "site_description": site_description,
        "site_chinese": {
            "code": chinese,
            "lang": html_lang(chinese),
            "current": chinese == get_language(),
        },
    }
