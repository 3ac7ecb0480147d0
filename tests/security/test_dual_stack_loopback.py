"""A server listening on `::` (HOST=::) treats its IPv4 loopback clients as loopback.

On a dual-stack socket every IPv4 client arrives as an IPv4-mapped IPv6 address, and
`curl http://127.0.0.1:8000/` is `::ffff:127.0.0.1`, which Python 3.12 does not call loopback.
Every exemption for this machine missed it: the request bucket refused the health checks and
benches on 127.0.0.1 past its burst, /metrics answered a local scraper 403, and the debug
pages (DJANGO_DEBUG=true) were the plain ones. `::1` was always exempt.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

BURST = 3
DEBUG_PAGE = "DEBUG = True"  # Django's technical 404 says why it is shown


def addresses(port: int) -> tuple[str, str]:
    return f"http://127.0.0.1:{port}", f"http://[::1]:{port}"


def test_ipv4_loopback_is_not_counted_by_the_request_bucket(serve_any):
    server = serve_any(
        "dual-stack-bucket",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.1",
    )
    for base in addresses(server.port):
        with httpx.Client(base_url=base, timeout=30) as client:
            probes = [client.get("/healthz").status_code for _ in range(BURST + 20)]

        assert probes == [200] * (BURST + 20), base  # before, over IPv4: 429 past the burst


def test_ipv4_loopback_reads_metrics_and_debug_pages(serve_any):
    server = serve_any("dual-stack-local")  # DJANGO_DEBUG=true, as the live servers run
    for base in addresses(server.port):
        with httpx.Client(base_url=base, timeout=30) as client:
            metrics = client.get("/metrics")
            missing = client.get("/no-such-page/")  # an article's 404 is the site's own page

        assert metrics.status_code == 200, base  # before, over IPv4: 403
        assert missing.status_code == 404, base
        assert DEBUG_PAGE in missing.text, base  # before, over IPv4: the plain page
