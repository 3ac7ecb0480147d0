"""One log line per limit and minute while it refuses requests, naming the latest address.

`docent_rate_limit_refusals_total` says that a limit refuses, not whom: the address cannot be a
label (one series per visitor). A line per refusal would let one client decide how fast the
log grows, so each process says it at most once per `SAY_EVERY` seconds for each reason: at the
first refusal after a quiet spell, then with the count refused since, and the latest address.
The line also names the key the limits counted that address under when it is not the address
itself (an IPv6 visitor's /64, an IPv4 address carried in IPv6): one visitor stepping through
its /64 was refused under one key while each line named another address. In JSON the reason,
the address, its key and the count are fields, for a log query.
"""

from __future__ import annotations

import logging
import threading
import time

from ops.logs import log_text

SAY_EVERY = 60.0  # seconds between two lines for the same reason, per process

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_said: dict[str, tuple[float, int]] = {}  # reason -> (when last said, refused since)


def refusal_note(*, reason: str, address: str, now: float | None = None) -> None:
    """Count one refusal of `address` by the limit `reason`; say so if due (see the module)."""
    now = time.monotonic() if now is None else now
    with _lock:
        said_at, since = _said.get(reason, (float("-inf"), 0))
        if now - said_at < SAY_EVERY:
            _said[reason] = (said_at, since + 1)
            return
        _said[reason] = (now, 0)
    more = f" ({since} more refused since the last such line)" if since else ""
    shown, bucket = log_text(address, 64), _address_bucket(address)
    counted = f" (counted as {log_text(bucket, 64)})" if bucket != address else ""
    fields = {"reason": reason, "address": shown, "address_bucket": log_text(bucket, 64)}
    logger.warning(
        "rate limit %s refused a request from %s%s%s; each refusal counts in "
        'docent_rate_limit_refusals_total{reason="%s"}',
        reason, shown, counted, more, reason,
        extra={"fields": {**fields, "refused_since": since}},
    )  # fmt: skip


def _address_bucket(address: str) -> str:
    # Imported here: agent.ratelimit counts its refusals through ops.metrics, which imports
    # this module.
    from agent.ratelimit import address_bucket

    return address_bucket(address)


def reset() -> None:
    """Forget what was said (tests)."""
    with _lock:
        _said.clear()
