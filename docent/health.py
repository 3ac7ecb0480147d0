"""Health of this process: alive, and ready for traffic (database, Redis, not draining)."""

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure means "not ready"
        connection.close()
        return False


async def _redis_ok() -> bool:
    if not settings.REDIS_URL:
        return True
    import redis.asyncio as redis

    client = redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        return bool(await client.ping())
    except Exception:  # noqa: BLE001
        return False
    finally:
        await client.aclose()


async def readiness() -> dict[str, bool]:
    """Each check by name; ready when all are true."""
    from agent.runner import runner

    return {
        "database": await sync_to_async(_database_ok, thread_sensitive=False)(),
        "redis": await _redis_ok(),
        "accepting_turns": not runner.closing,
    }
