"""How late a web process's event loop runs: a saturated or blocked process, seen from outside.

Every stream, socket and request of a daphne process shares one event loop; when CPU work or a
blocking call holds it, every visitor of that process waits, while the turn counters only show
slower turns. A tick sleeps `EVERY` seconds and records how much later than that it woke
(`docent_event_loop_lag_seconds`), and when it last ran
(`docent_event_loop_last_tick_timestamp_seconds`, one series per live process): a loop
that is stuck right now records no lag until it runs again, but a neighbour's scrape (several
workers share PROMETHEUS_MULTIPROC_DIR) sees its last tick grow old.
"""

import asyncio
import logging
import os
import threading
import time

from ops.metrics import LOOP_LAG, LOOP_LAST_TICK

logger = logging.getLogger(__name__)

EVERY = 0.25  # seconds between ticks: a histogram sample each, cheap (an mmap'd write)
WARN_SECONDS = 1.0  # a lag past this is a WARNING line: every visitor of the process waited

# Set while the process loads its embedding model in a thread at start (docent.lifecycle): that
# thread holds the GIL for seconds, so the loop runs late once, expectedly. Said as INFO then:
# every start of `make run WORKERS=2` printed one or two "blocked for 2113 ms" WARNINGs, the
# same words as a real stall. The lag is still measured.
warming_up = threading.Event()


async def loop_lag_watch() -> None:
    """Measure this loop's lag for as long as it runs (started once per web process)."""
    loop = asyncio.get_running_loop()
    pid = os.getpid()
    last_tick = LOOP_LAST_TICK.labels("web")
    while True:
        last_tick.set(time.time())
        started = loop.time()
        await asyncio.sleep(EVERY)
        lag = max(0.0, loop.time() - started - EVERY)
        LOOP_LAG.observe(lag)
        if lag >= WARN_SECONDS and warming_up.is_set():
            logger.info(
                "event loop of web process %d ran %.0f ms late while it loaded the embedding "
                "model at start (once per process; requests in that time waited)",
                pid,
                lag * 1000,
            )
        elif lag >= WARN_SECONDS:
            logger.warning(
                "event loop of web process %d blocked for %.0f ms: every stream and request "
                "of this process waited",
                pid,
                lag * 1000,
            )
