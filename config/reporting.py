"""The debug page's settings without the passwords written into URLs.

Django's filter hides a setting by its name (KEY, SECRET, PASS, TOKEN…), and `REDIS_URL`,
`CACHES`' LOCATION and `CHANNEL_LAYERS`' hosts name none of those: the password of the cluster's
Redis, which only its owner may read from a file, was on every debug page for a loopback viewer,
and loopback is every local user's (a form post with too many fields is such a page, status 400).
"""

import re
from typing import Any

from django.views.debug import SafeExceptionReporterFilter

# scheme://user:password@host: the password up to the `@` (userinfo has no `/`, `@` or space).
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^/@:\s]*:)[^/@\s]+(?=@)", re.IGNORECASE)
# ...or in its query, as redis-py and libpq read one (`unix:///run/redis.sock?password=…`).
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)[^&#\s]+", re.IGNORECASE)


def url_passwords_hidden(text: str) -> str:
    """`text` with the password of every URL in it written as the debug page's stars."""
    substitute = SafeExceptionReporterFilter.cleansed_substitute
    for pattern in (_URL_PASSWORD, _QUERY_PASSWORD):
        text = pattern.sub(lambda match: match["head"] + substitute, text)
    return text


class CredentialsFilter(SafeExceptionReporterFilter):
    """Django's filter, and a URL's password hidden wherever a setting holds one."""

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)  # recurses through this method
        return url_passwords_hidden(cleansed) if isinstance(cleansed, str) else cleansed
