"""A running turn's hold on its conversation and on one of its session's turn slots.

Taken before the turn starts, renewed by a heartbeat (a dead worker's hold expires within
AGENT_LEASE_SECONDS), moved to "saving" after the last event, released once the save has
landed: the next turn and the transcript wait for that, wherever the turn ran.
"""

import asyncio
import contextlib
import logging
import time

from django.conf import settings

from agent.exceptions import SharedStateDown
from agent.holders import holder_gone, holder_token
from agent.holds import HoldSettlement
from agent.ratelimit import address_bucket, network_bucket
from agent.shared import Acquired, state

logger = logging.getLogger(__name__)

WAIT_POLL = 0.05  # seconds between looks at a conversation whose turn is being saved
RELEASE_RETRY_SECONDS = 1.0  # between tries to release a hold Redis did not answer for
_LETTING_GO: set[asyncio.Task] = set()  # releases waiting for Redis to answer again


class TurnLease:
    def __init__(
        self, *, conversation_id: str | None, session_key: str, client_ip: str = ""
    ) -> None:
        self.conversation = _conversation_key(conversation_id) if conversation_id else ""
        self.session = f"turns:s:{session_key}"
        # The address's turns, all its sessions together: a session is a cookie, free to mint.
        self.address = f"turns:ip:{address_bucket(client_ip)}" if client_ip else ""
        # And its IPv6 /48's: by the /64 alone, each of a /48's 65,536 /64s had the slots afresh.
        network = network_bucket(client_ip) if client_ip else ""
        self.network = f"turns:net:{network}" if network else ""
        self.token = holder_token()
        self._heartbeat: asyncio.Task | None = None

    async def acquire(self, wait: float = 5.0) -> Acquired:
        """Take the hold; a previous turn still saving is waited for (up to `wait` seconds)."""
        deadline = time.monotonic() + wait
        judged = False
        while True:
            result = await self._take()
            if result in (Acquired.BUSY, Acquired.SAVING) and not judged:
                judged = True  # once: a lock taken over since is a live turn's
                if await self._unlock_dead():
                    continue
            if result != Acquired.SAVING or time.monotonic() > deadline:
                break
            await asyncio.sleep(WAIT_POLL)
        if result == Acquired.OK:
            self._heartbeat = asyncio.create_task(self._beat())
        return result

    async def _take(self) -> Acquired:
        """One attempt; cancelled meanwhile (a socket closed right after its message), it waits
        for the answer and lets go of what was taken.

        The script runs in Redis whether or not its answer is read: the conversation's lock and
        the slots it took stayed held, unrenewed, until AGENT_LEASE_SECONDS ran out (30 s of
        "busy" for the visitor's next message in that conversation, and slots of its session
        and address gone meanwhile).
        """
        taking = asyncio.ensure_future(
            state().acquire(
                self.conversation,
                self.session,
                self.token,
                settings.AGENT_TURNS_PER_SESSION,
                self.address,
                settings.AGENT_TURNS_PER_IP,
                self.network,
                settings.AGENT_TURNS_PER_NETWORK,
            )
        )
        try:
            return await asyncio.shield(taking)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                if await taking == Acquired.OK:
                    await self.release()
            raise

    async def _unlock_dead(self) -> bool:
        """Take off the conversation's lock when its holder's process is gone (agent.holders):
        a killed web process's conversation answered "busy" until the lease ran out."""
        lock = await state().holder(self.conversation) if self.conversation else ""
        slots = [key for key in (self.session, self.address, self.network) if key]
        return await _dead_lock_off(self.conversation, lock, slots)

    async def attach(self, conversation_id: str) -> None:
        """Hold a conversation this turn created (nobody else knows its id yet)."""
        self.conversation = _conversation_key(conversation_id)
        await state().claim(self.conversation, self.token)

    async def saving(self, spent: HoldSettlement | None = None) -> None:
        """The turn's last event is sent: free the session's and the address's slots, keep the
        conversation saving, and settle the budgets (`ratelimit.budget_settlement`), all in one
        round trip."""
        await state().finish(
            self.conversation, self.session, self.token, [], self.address, self.network, spent
        )

    async def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        try:
            await self._let_go()
        except SharedStateDown:  # said by agent.shared
            # Left to expire, the lock said `busy` ("answering in another tab") to the
            # visitor's next message in the conversation for up to AGENT_LEASE_SECONDS after
            # Redis was back, and the session's slot stayed taken as long.
            task = asyncio.create_task(self._let_go_later())
            _LETTING_GO.add(task)  # a reference, or the task may be collected
            task.add_done_callback(_LETTING_GO.discard)
        except Exception:  # the hold then expires by itself
            logger.exception("releasing a turn lock failed")

    async def _let_go(self) -> None:
        await state().update(
            self.conversation, self.session, self.token, "release", self.address, self.network
        )

    async def _let_go_later(self) -> None:
        """Release once Redis answers, while the hold would still be there (it expires at the
        end of its lease: a token of its own, so another turn's lock is never touched)."""
        deadline = time.monotonic() + settings.AGENT_LEASE_SECONDS
        while time.monotonic() < deadline:
            await asyncio.sleep(RELEASE_RETRY_SECONDS)
            with contextlib.suppress(SharedStateDown):
                await self._let_go()
                return

    async def _beat(self) -> None:
        interval = settings.AGENT_LEASE_SECONDS / 3
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await state().update(
                    self.conversation, self.session, self.token, "renew", self.address, self.network
                )


async def conversation_wait_saved(conversation_id: str, wait: float = 5.0) -> None:
    """Return once the conversation's last turn is saved (or `wait` seconds have passed).

    A holder killed while it saved (after the turn's last event) never saves: its lock is
    taken off at once. The transcript waited the whole `wait` for it, every load, until the
    lock's lease ran out (AGENT_LEASE_SECONDS).
    """
    key = _conversation_key(conversation_id)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        lock = await state().holder(key)
        if not lock.startswith("saving:") or await _dead_lock_off(key, lock, []):
            return
        await asyncio.sleep(WAIT_POLL)


async def _dead_lock_off(conversation: str, lock: str, slots: list[str]) -> bool:
    """Take off `lock` (and its token's `slots`) when its holder's process is gone."""
    phase, _, token = lock.partition(":")
    if not token or not holder_gone(token):
        return False
    if not await state().unlock(conversation, lock, slots):
        return False
    logger.warning(
        "conversation %s: its turn's process %s is gone (killed?) while %s; its lock was taken "
        "off before its lease ran out (the turn is recovered as interrupted)",
        conversation.removeprefix("turns:c:"),
        token.rsplit(".", 1)[-1],
        "saving the turn" if phase == "saving" else "running the turn",
    )
    return True


def _conversation_key(conversation_id: str) -> str:
    return f"turns:c:{conversation_id}"
