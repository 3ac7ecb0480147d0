"""Health of this process: alive, and ready for traffic (database, Redis, not draining)."""

import asyncio

from asgiref.sync import sync_to_async
from django.db import connection

REDIS_SECONDS = 2  # past this Redis counts as unreachable


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure means "not ready"
        connection.close()
        return False


async def _redis_ok() -> bool:
    from agent.shared import state

    try:
        async with asyncio.timeout(REDIS_SECONDS):
            return await state().ping()
    except Exception:  # noqa: BLE001 - any failure means "not ready"
        return False


async def readiness() -> dict[str, bool]:
    """Each check by name; ready when all are true."""
    from agent.runner import runner

    return {
        "database": await sync_to_async(_database_ok)(),
        "redis": await _redis_ok(),
        "accepting_turns": not runner.closing,
    }
