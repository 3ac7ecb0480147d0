"""Abuse limits on the shared cache (Redis when REDIS_URL is set), so they hold across workers."""

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

WINDOW = 60  # seconds: the "per minute" of the message limits


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: int
    reason: str = ""  # which limit: session, ip, conversation_budget, daily_budget (metrics)


async def message_allow(*, session_key: str, client_ip: str) -> Refusal | None:
    """Count one message against the per-session and per-IP limits; refuse when over."""
    now = time.time()
    window = int(now // WINDOW)
    retry_after = max(1, int(WINDOW - now % WINDOW))
    checks = [
        ("session", f"rl:s:{session_key}:{window}", settings.AGENT_MESSAGES_PER_MINUTE),
        ("ip", f"rl:ip:{client_ip}:{window}", settings.AGENT_MESSAGES_PER_MINUTE_PER_IP),
    ]
    for reason, key, limit in checks:
        if await _incr(key, ttl=WINDOW * 2) > limit:
            return Refusal(
                f"Too many messages. Please wait {retry_after} s before asking again.",
                retry_after,
                reason,
            )
    return None


async def budget_allow(*, conversation_id: str | None) -> Refusal | None:
    """Refuse a turn when the conversation (if any yet) or the site has spent its token budget."""
    if conversation_id is not None:
        spent_conversation = await cache.aget(f"tok:c:{conversation_id}", 0)
        if spent_conversation >= settings.AGENT_TOKENS_PER_CONVERSATION:
            return Refusal(
                "This conversation has used its token budget. Start a new chat.",
                0,
                "conversation_budget",
            )
    spent_today = await cache.aget(_day_key(), 0)
    if spent_today >= settings.AGENT_TOKENS_PER_DAY:
        return Refusal(
            "The assistant has used today's budget. Please come back tomorrow.",
            _seconds_to_midnight(),
            "daily_budget",
        )
    return None


async def budget_spend(*, conversation_id: str, tokens: int) -> None:
    """Add a finished turn's tokens to the conversation's and the day's counters."""
    if tokens <= 0:
        return
    await _incr(f"tok:c:{conversation_id}", by=tokens, ttl=7 * 24 * 3600)
    await _incr(_day_key(), by=tokens, ttl=2 * 24 * 3600)


async def _incr(key: str, *, by: int = 1, ttl: int) -> int:
    # add() is a no-op when the key exists, so concurrent workers never reset a counter.
    await cache.aadd(key, 0, ttl)
    try:
        return await cache.aincr(key, by)
    except ValueError:  # expired between add and incr: start a new window
        await cache.aset(key, by, ttl)
        return by


def _day_key() -> str:
    return f"tok:d:{time.strftime('%Y-%m-%d', time.gmtime())}"


def _seconds_to_midnight() -> int:
    return int(86400 - time.time() % 86400)
