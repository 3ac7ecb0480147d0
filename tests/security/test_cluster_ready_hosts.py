"""`make run WORKERS=N` served its starting page for good once DEBUG was off.

Its announcer asks each web process for `/readyz` before it lifts the starting page and says
"Docent is serving". It asked as `127.0.0.1:<port>`, a Host outside the site's
`DJANGO_ALLOWED_HOSTS` (as `HOST=0.0.0.0` requires), and over plain HTTP, which a DEBUG-off
web process redirects to HTTPS: every try was refused (DisallowedHost, two WARNING lines each
half second), and after ten minutes it said the site was not answering while nginx kept
showing every visitor "Docent is starting" (red team 34, found live).
"""

import pytest

from docent import startup

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_announcer_finds_a_debug_off_web_process_ready(serve, settings):
    server = serve(
        "ready-hosts",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="r" * 30 + "-ready-hosts-secret-0123456789abcdef",
        DJANGO_ALLOWED_HOSTS="blog.example,.example.org",
    )
    settings.ALLOWED_HOSTS = ["blog.example", ".example.org"]  # the announcer's own settings
    refused = server.output().count("DisallowedHost")  # the fixture's own start-up check

    ready = startup.cluster_wait_ready(
        host="127.0.0.1", port=server.port, web_ports=[server.port], seconds=20, poll=0.2
    )
    server.stop()

    assert ready  # before: never (400 for the Host, then 301 to https)
    assert server.output().count("DisallowedHost") == refused
