"""The event loop's lag line: a WARNING for a stall, INFO while the model loads at start."""

import asyncio
import logging
import time

from ops import loop_lag


def blocked_once(*, warming: bool) -> None:
    """Hold the loop past WARN_SECONDS once (as the warm-up thread holding the GIL does)."""

    async def run() -> None:
        watch = asyncio.ensure_future(loop_lag.loop_lag_watch())
        await asyncio.sleep(0.01)  # the watch's first tick is asleep now
        if warming:
            loop_lag.warming_up.set()
        time.sleep(loop_lag.WARN_SECONDS + loop_lag.EVERY)
        await asyncio.sleep(0.01)  # the overdue tick runs and logs
        loop_lag.warming_up.clear()
        watch.cancel()

    asyncio.run(run())


def test_a_stall_is_a_warning(caplog):
    with caplog.at_level(logging.INFO, logger="ops.loop_lag"):
        blocked_once(warming=False)
    [line] = caplog.records
    assert line.levelname == "WARNING" and "blocked for" in line.getMessage()


def test_the_start_up_model_load_is_said_as_info(caplog):
    # Every `make run WORKERS=2` start printed "event loop of web process … blocked for 2113
    # ms: every stream and request of this process waited" (and 5604 ms for the other), the
    # words of a real stall, for the embedding model loading in a thread at start.
    with caplog.at_level(logging.INFO, logger="ops.loop_lag"):
        blocked_once(warming=True)
    [line] = caplog.records
    assert line.levelname == "INFO"
    assert "while it loaded the embedding model at start" in line.getMessage()


def test_the_flag_is_up_from_start_until_the_warm_up_ends(monkeypatch, settings):
    from blog import embeddings
    from docent import lifecycle

    settings.EMBEDDING_WARM_AT_START = True
    monkeypatch.setattr(lifecycle.reactor, "callWhenRunning", lambda call: None)
    lifecycle.on_startup(worker=False)
    assert loop_lag.warming_up.is_set()

    def broken():
        raise OSError("no model here")

    monkeypatch.setattr(embeddings, "embedder_get", broken)
    lifecycle.embedder_warm_quietly()  # a failed warm-up ends it too
    assert not loop_lag.warming_up.is_set()
