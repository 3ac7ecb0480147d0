"""Health of this process: alive, and ready for traffic (database, Redis, not draining)."""

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.db import connection

from ops import loop_lag

REDIS_SECONDS = 2  # past this Redis counts as unreachable

logger = logging.getLogger(__name__)
_failing: frozenset[str] = frozenset()  # the checks the last probe found failing
# Why each check last failed, for the "not ready" line: an operator paged at night read "not
# ready: database" and had to find out alone whether it was refused, slow or out of slots.
_causes: dict[str, str] = {}
CAUSE_CHARS = 200


def _failed(check: str, exc: BaseException) -> bool:
    """Remember why `check` failed, in one line; always False (the check's answer)."""
    cause = " ".join(str(exc).split()) or type(exc).__name__  # a timeout says nothing itself
    _causes[check] = cause[:CAUSE_CHARS]
    return False


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        connection.close()
        return _failed("database", exc)


async def _redis_ok() -> bool:
    from agent.shared import state

    try:
        async with asyncio.timeout(REDIS_SECONDS):
            return await state().ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        return _failed("redis", exc)


async def _checks() -> dict[str, bool]:
    return {"database": await sync_to_async(_database_ok)(), "redis": await _redis_ok()}


_in_flight: asyncio.Future | None = None


async def _shared_checks() -> dict[str, bool]:
    """The database and Redis checks; callers that come while one runs share its answer.

    /readyz skips the per-address request queue (config/concurrency.py): a probe must not
    wait behind a burst of page loads (15 s under 500 concurrent requests) and take a busy but
    healthy worker out of rotation. Sharing the check in flight keeps a flood of probes from
    becoming a flood of database connections. Nothing is cached past it: a database that just
    went down fails the next probe.
    """
    global _in_flight
    loop = asyncio.get_running_loop()
    if _in_flight is None or _in_flight.done() or _in_flight.get_loop() is not loop:
        _in_flight = asyncio.ensure_future(_checks())
    # Shielded: one prober hanging up does not cancel the check the others wait for.
    return await asyncio.shield(_in_flight)


async def readiness() -> dict[str, bool]:
    """Each check by name; ready when all are true. A change is logged once: not ready (which
    checks failed, WARNING), ready again (INFO)."""
    from agent.runner import runner

    checks = {**await _shared_checks(), "accepting_turns": not runner.closing}
    _log_change(frozenset(name for name, ok in checks.items() if not ok))
    return checks


def _log_change(failing: frozenset[str]) -> None:
    global _failing
    if failing == _failing:
        return
    if failing and loop_lag.warming_up.is_set():
        # At start the embedding model loads in a thread that holds the GIL for seconds, and a
        # probe's 2 s Redis ping times out behind it: every `make run WORKERS=2` start said
        # "not ready: redis" at WARNING with Redis up. Said as INFO and not remembered, so a
        # check that still fails once the model is loaded is the WARNING it always was.
        logger.info("not ready yet, loading the embedding model at start: %s", _names(failing))
        return
    if failing:
        logger.warning("not ready: %s", _names(failing))
    else:
        logger.info("ready again")
    _failing = failing


def _names(failing: frozenset[str]) -> str:
    """The failing checks, each with its cause when it has one: "redis (Connection refused)"."""
    return ", ".join(
        f"{name} ({_causes[name]})" if _causes.get(name) else name for name in sorted(failing)
    )
