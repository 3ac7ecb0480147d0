"""The cluster's nginx sends a static file with the policy a web process sends it with.

`make run` serves /static/ from the app, whose every answer carries the site's
Content-Security-Policy and Cross-Origin-Opener-Policy; the cluster's nginx serves the same
files from disk and sent neither (red team 34). An SVG opened on its own is a document: with no
policy, the scripts it holds run on the site's origin. The site's own SVGs hold none, but
nothing else stood between a file under /static/ and the origin.
"""

import shutil

import pytest
from django.test import Client

from tests.security.test_proxy_connections import running_proxy
from tests.security.test_proxy_disclosure import static_root  # noqa: F401 - a fixture
from tests.security.test_proxy_static_cache import _head, _write

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
PICTURE = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>'


def test_static_files_through_nginx_carry_the_pages_policy(tmp_path, static_root):  # noqa: F811
    _write(static_root, "picture.svg", PICTURE)
    page = Client().get("/healthz")  # what a web process sends with anything it serves
    with running_proxy(tmp_path, host="127.0.0.1") as (port, _):
        served = _head(port, "picture.svg")
        missing = _head(port, "no-such-picture.svg")  # nginx's own 404 page

    assert served["status"] == "200" and served["body"] == PICTURE
    policy = served.get("content-security-policy")  # before: none
    assert policy == page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert served.get("cross-origin-opener-policy") == page["Cross-Origin-Opener-Policy"]
    assert missing["status"] == "404"
    assert missing.get("content-security-policy") == policy
