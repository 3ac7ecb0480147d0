"""A debug page shows no password written into a URL setting (REDIS_URL, CACHES, CHANNEL_LAYERS).

`make run WORKERS=N` gives its Redis a password that only its owner may read, because loopback
is every local user's; and a loopback viewer gets the debug pages, settings included. Django
hides a setting by its name (KEY, PASS, TOKEN…), and the URLs' names say none of those: a form
post with more fields than Django parses (a 400 drawn as the debug page) showed the password
three times.
"""

import httpx
import pytest
import redis

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "red18-redis-password-0123456789"
FIELDS = "&".join(f"field{n}=1" for n in range(1100))  # past DATA_UPLOAD_MAX_NUMBER_FIELDS


def test_the_debug_page_hides_the_password_of_the_shared_state(serve, redis_url):
    redis.Redis.from_url(redis_url).config_set("requirepass", PASSWORD)
    with_password = redis_url.replace("redis://", f"redis://:{PASSWORD}@")
    server = serve("debug-credentials", REDIS_URL=with_password)

    page = httpx.post(
        server.url + "/i18n/setlang/",
        content=FIELDS,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )

    # The attack reached the debug page and its settings (a loopback viewer's, as designed)…
    assert page.status_code == 400
    assert "TooManyFieldsSent" in page.text and "CHANNEL_LAYERS" in page.text
    # …and the URLs are there, their passwords not.
    assert "REDIS_URL" in page.text and "127.0.0.1" in page.text
    assert PASSWORD not in page.text
