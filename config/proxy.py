"""Client address and scheme behind trusted reverse proxies, for HTTP, SSE and WebSocket alike.

`DJANGO_TRUSTED_PROXIES` names the proxies in front of the workers, in one of two forms:

- a number N: N proxies, the nearest on a loopback or private address. The client is the Nth
  address from the right of X-Forwarded-For (each proxy appends the address it saw).
- addresses and networks, comma-separated (`127.0.0.1,10.0.0.0/8`): X-Forwarded-For is walked
  from the right, skipping trusted proxies; the first other address is the client.

The headers count only when the direct peer is a trusted proxy: anyone else's are ignored and
removed, so nothing downstream can read a forged one. Unset (or 0): no proxy, headers ignored.
Daphne's own proxy-header options trust the leftmost address from any peer, so they stay off.
"""

import hmac
import ipaddress
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
UNTRUSTED_FORWARD = "docent.untrusted_forward"  # scope key: see TrustedProxyMiddleware.rewrite
FORWARDED = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-port", b"x-forwarded-host")
# What the cluster's nginx sends to vouch for its X-Forwarded-* (DJANGO_TRUSTED_PROXY_SECRET):
# its web processes listen on loopback, which is every local user's.
PROXY_SECRET_HEADER = b"x-docent-proxy"
# Headers a proxy or tunnel adds besides X-Forwarded-* (which TrustedProxyMiddleware judges): a
# request that carries one came through a proxy, whatever its peer address. Read by the debug
# pages (config/middleware.py) and /metrics (ops/views.py), which trust a loopback peer.
PROXY_HEADERS = (
    "HTTP_X_REAL_IP",
    "HTTP_FORWARDED",
    "HTTP_VIA",
    "HTTP_CF_CONNECTING_IP",
    "HTTP_TRUE_CLIENT_IP",
)
# The nearest of N counted proxies must sit here: same host or a private network.
PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
) + (ipaddress.ip_network("fc00::/7"),)


@dataclass(frozen=True)
class TrustedProxies:
    hops: int = 0
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, value: str) -> "TrustedProxies":
        """Read the setting.

        Raises:
            ValueError: neither a number nor a list of addresses and networks.
        """
        value = value.strip()
        if not value:
            return cls()
        if value.isdigit():
            return cls(hops=int(value))
        return cls(
            networks=tuple(
                ipaddress.ip_network(item.strip(), strict=False)
                for item in value.split(",")
                if item.strip()
            )
        )

    @property
    def enabled(self) -> bool:
        return bool(self.hops or self.networks)

    def peer_trusted(self, peer: str) -> bool:
        address = _address(peer)
        if address is None:
            return False
        return _within(address, self.networks if self.networks else PRIVATE)

    def resolve(self, peer: str, forwarded_for: str, proto: str) -> tuple[str, str | None]:
        """The client's address and the scheme it used (None: the connection's own)."""
        if not self.enabled or not self.peer_trusted(peer):
            return peer, None
        chain = [item.strip() for item in forwarded_for.split(",") if item.strip()]
        protos = [item.strip().lower() for item in proto.split(",") if item.strip()]
        client, depth = self._client(peer, chain)
        scheme = None
        if protos:
            # Each proxy that appends adds one value; take the one the outermost trusted proxy saw.
            scheme = protos[max(0, len(protos) - depth)] if len(protos) >= depth else protos[0]
        return client, scheme if scheme in {"http", "https"} else None

    def relayed(self, forwarded_for: str) -> bool:
        """Whether X-Forwarded-For names more than the trusted proxies appended: the client they
        report passed the request on for someone else (a tunnel or proxy nobody configured), or
        wrote the header itself. Either way that someone is unknown."""
        chain = [item.strip() for item in forwarded_for.split(",") if item.strip()]
        if self.hops:
            return len(chain) > self.hops
        for position, item in enumerate(reversed(chain)):
            address = _address(item)
            if address is None or not _within(address, self.networks):
                return position < len(chain) - 1
        return False

    def unnamed(self, forwarded_for: str) -> bool:
        """Whether the place of the client's address holds something else ("unknown", a token):
        the outermost proxy could not say whom it forwards, so the client is unknown."""
        chain = [item.strip() for item in forwarded_for.split(",") if item.strip()]
        if self.hops:
            return len(chain) >= self.hops and _address(chain[-self.hops]) is None
        for item in reversed(chain):
            address = _address(item)
            if address is None:
                return True
            if not _within(address, self.networks):
                return False
        return False

    def _client(self, peer: str, chain: list[str]) -> tuple[str, int]:
        if self.hops:
            # Read as an address, as the limits count it: taken as written, a load balancer's
            # `203.0.113.7:51234` was a new address per source port, and `[2001:db8::1]` was
            # outside its /64, so every new connection had fresh per-address limits.
            # Fewer entries than proxies (a visitor who reached the inner proxy directly, past
            # the load balancer) or no address where the client's should be: the outermost
            # address a trusted proxy did write, never the nearest proxy's own. That one is on
            # loopback, and a visitor taken for it skipped the request bucket and read /metrics
            # (red team 38).
            named = chain[-self.hops :]
            for depth, item in zip(range(len(named), 0, -1), named, strict=True):
                address = _address(item)
                if address is not None:
                    return str(address), depth
            return peer, 1
        depth = 1
        for item in reversed(chain):
            address = _address(item)
            if address is None:
                return peer, depth  # garbage in the trusted part: keep the proxy's address
            if not _within(address, self.networks):
                return str(address), depth
            depth += 1
        return (chain[0] if chain else peer), depth


def networks_parse(value) -> tuple[Network, ...]:
    """Networks from a comma-separated text, or from an iterable of texts or networks.

    Raises:
        ValueError: an item is neither an address nor a network. The cluster writes these into
            nginx's configuration (NGINX_REAL_IP_FROM): only a parsed network reaches it, never
            the text (`10.0.0.0/8; include …` would be a directive of its own).
    """
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(
        ipaddress.ip_network(str(item).strip(), strict=False) for item in items if str(item).strip()
    )


def _forwarded_port(value: bytes) -> int | None:
    """The last proxy's X-Forwarded-Port (the nearest one's, as with the address), if a port."""
    port = value.decode("latin1").rpartition(",")[2].strip()
    if port.isascii() and port.isdigit() and 0 < int(port) < 65536:
        return int(port)
    return None


class TrustedProxyMiddleware:
    """ASGI middleware: rewrite scope["client"] and scope["scheme"] from trusted proxies only,
    and serve every request from the root (scope["root_path"], which daphne lets a header set)."""

    def __init__(self, application, proxies: TrustedProxies, secret: str = "") -> None:
        self.application = application
        self.proxies = proxies
        self.secret = secret.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] in {"http", "websocket"}:
            scope = self.rewrite(scope)
        return await self.application(scope, receive, send)

    def rewrite(self, scope: dict) -> dict:
        headers = scope.get("headers") or []
        values = {name: b"" for name in FORWARDED}
        for name, value in headers:
            if name in values:  # repeated headers join, as proxies and RFC 9110 treat them
                values[name] = (values[name] + b"," + value) if values[name] else value
        client = scope.get("client") or ("", 0)
        peer = str(client[0])
        proxies = self.proxies if self._vouched(headers) else TrustedProxies()
        address, scheme = proxies.resolve(
            peer,
            values[b"x-forwarded-for"].decode("latin1"),
            values[b"x-forwarded-proto"].decode("latin1"),
        )
        scope = dict(scope)
        trusted = proxies.enabled and proxies.peer_trusted(peer)
        if any(values.values()) and not trusted:
            # A proxy nobody said to trust (or a client posing as one): whoever it forwards is
            # unknown, so the request is not "from loopback" for what trusts the local network.
            scope[UNTRUSTED_FORWARD] = True
        elif trusted and (
            self.proxies.relayed(values[b"x-forwarded-for"].decode("latin1"))
            or self.proxies.unnamed(values[b"x-forwarded-for"].decode("latin1"))
        ):
            # The same one step further out: the cluster's nginx (trusted) reached by a tunnel
            # or proxy on loopback (ngrok, an outer nginx) names that loopback peer as the
            # client, and every visitor behind it got the debug pages and /metrics.
            scope[UNTRUSTED_FORWARD] = True
        # Nobody downstream may read a forwarded header: the resolved values are the truth.
        # Nor the proxy's secret (a loopback viewer's debug page lists the request's headers).
        scope["headers"] = [
            (name, value)
            for name, value in headers
            if name not in values and name != PROXY_SECRET_HEADER
        ]
        scope["client"] = (address, client[1] if len(client) > 1 else 0)
        port = _forwarded_port(values[b"x-forwarded-port"])
        if trusted and port is not None and scope.get("server"):
            # The port the visitor reached (nginx's, not this process's loopback one): what a
            # Host's port is checked against (blog.feeds.site_host).
            scope["server"] = (scope["server"][0], port)
        # The site is served from the root. daphne takes `root_path` from a `Daphne-Root-Path`
        # header sent by anyone, and Django then routes by the path without it while
        # `request.path` keeps it: `/x/admin/login/` with `Daphne-Root-Path: /x` reached the
        # sign-in page past its throttle (and `/x/api/search` past the search limit, `/x/api/chat`
        # past the origin and JSON checks). No proxy of ours sets it, so no client may either.
        scope["root_path"] = ""
        if scheme is not None:
            secure = scheme == "https"
            if scope["type"] == "websocket":
                scope["scheme"] = "wss" if secure else "ws"
            else:
                scope["scheme"] = scheme
        return scope

    def _vouched(self, headers: list) -> bool:
        """Whether the request came through the proxy that knows the secret (any peer may, when
        none is set). The cluster's web processes listen on loopback, and a trusted peer is
        judged by its address: any local user who sent a request straight to a worker's port
        was believed, whatever X-Forwarded-For it wrote (every request a fresh address).
        """
        if not self.secret:
            return True
        sent = [value for name, value in headers if name == PROXY_SECRET_HEADER]
        return len(sent) == 1 and hmac.compare_digest(sent[0], self.secret)


def client_is_loopback(address: str) -> bool:
    """Whether a client's address is this machine's, however a dual-stack socket spells it."""
    parsed = _address(address)
    return parsed is not None and address_unmapped(parsed).is_loopback


def address_unmapped(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as the IPv4 address it is.

    A server listening on `::` (HOST=::) sees every IPv4 client so, and Python 3.12 says
    `::ffff:127.0.0.1` is not loopback: `curl 127.0.0.1` was a stranger to every exemption
    for this machine (the request bucket, /metrics, the debug pages).
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _address(text: str) -> IPAddress | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _within(address: IPAddress, networks: tuple[Network, ...]) -> bool:
    address = address_unmapped(address)
    return any(address.version == net.version and address in net for net in networks)
