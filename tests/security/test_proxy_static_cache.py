"""How long the cluster's nginx lets browsers and CDNs keep a static file.

`collectstatic` writes a content-hashed copy of each file (`chat/panel.0123456789ab.js`) next
to the file under its own name, and the page links the hashed one. But the chat's ES modules
import each other by plain name (`import { Composer } from "./composer.js"`): Django rewrites
no `import` unless told to, so every module but the first is fetched under a name whose
content changes at each deploy. nginx sent every file under /static/ as `public, immutable`
for a year: a browser that had loaded the panel once kept `markdown.js` (the link filter of
answers it renders) and the rest for a year, whatever a deploy fixed in them, and a CDN served
them to everyone. Only a hashed name may be kept; any other is checked again each time.
"""

import shutil
import socket
from pathlib import Path

import pytest

from tests.security.test_proxy_connections import running_proxy
from tests.security.test_proxy_disclosure import static_root  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
HASHED = "chat/panel.0123456789ab.js"  # as ManifestStaticFilesStorage names it (12 hex digits)
PLAIN = "chat/markdown.js"  # imported by name from the hashed module


def _head(port: int, path: str, extra: str = "") -> dict[str, str]:
    request = f"GET /static/{path} HTTP/1.1\r\nHost: d\r\n{extra}Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.9", 0)) as c:
        c.sendall(request.encode())
        c.settimeout(10)
        received = b""
        while chunk := c.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {"status": lines[0].split(" ")[1], "body": body.decode()}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()  # a repeated header (two Cache-Control lines) joins
        fields[name] = f"{fields[name]}, {value.strip()}" if name in fields else value.strip()
    return fields


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o755)
    path.write_text(text)
    path.chmod(0o644)


def test_only_hashed_static_names_are_kept_for_a_year(tmp_path, static_root):  # noqa: F811
    _write(static_root, HASHED, 'import { render } from "./markdown.js";')
    _write(static_root, PLAIN, "export const render = 'before the fix';")
    with running_proxy(tmp_path, host="127.0.0.1") as (port, _):
        hashed = _head(port, HASHED)
        plain = _head(port, PLAIN)
        # A deploy changes the module under the same name; the browser asks again as told.
        _write(static_root, PLAIN, "export const render = 'after the fix, longer';")
        again = _head(port, PLAIN, f"If-None-Match: {plain.get('etag', '')}\r\n")

    assert hashed["status"] == "200"
    assert "immutable" in hashed["cache-control"]
    assert "max-age=31536000" in hashed["cache-control"]
    assert plain["status"] == "200"
    # Before: "public, immutable" and a year's max-age; the browser never asked again.
    assert "immutable" not in plain["cache-control"]
    assert "no-cache" in plain["cache-control"]
    assert "max-age=31536000" not in plain.get("cache-control", "")
    assert "expires" not in plain  # a year ahead before
    assert again["status"] == "200"
    assert again["body"] == "export const render = 'after the fix, longer';"
    # The headers every static answer carries, on both kinds of name.
    for answer in (hashed, plain):
        assert answer["x-content-type-options"] == "nosniff"
        assert answer["x-frame-options"] == "DENY"
