"""config.proxy without a proxy running: which X-Forwarded-Port a web process believes."""

import pytest

from config.proxy import TrustedProxies, TrustedProxyMiddleware


def _server_after(port: bytes, proxies: TrustedProxies) -> tuple[str, int]:
    scope = {
        "type": "http",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 9000),
        "headers": [(b"x-forwarded-port", port)],
    }
    return TrustedProxyMiddleware(None, proxies).rewrite(scope)["server"]


def test_a_trusted_proxy_names_the_port_the_visitor_reached():
    assert _server_after(b"8443", TrustedProxies(hops=1)) == ("127.0.0.1", 8443)
    assert _server_after(b"6666, 8443", TrustedProxies(hops=1)) == ("127.0.0.1", 8443)


@pytest.mark.parametrize("port", [b"0", b"65536", b"-1", b"80a", b"\xef\xbc\x98\xef\xbc\x90", b""])
def test_a_port_that_is_none_is_not_believed(port):
    assert _server_after(port, TrustedProxies(hops=1)) == ("127.0.0.1", 9000)


def test_nobody_untrusted_moves_the_port():
    assert _server_after(b"8443", TrustedProxies()) == ("127.0.0.1", 9000)
