"""Queued jobs of the assistant: recovering the turns of dead workers, draining the spool."""

import logging

from channels.db import database_sync_to_async
from django.conf import settings
from procrastinate.contrib.django import app

from agent.checkpoints import RecoveredTurn, turns_recover
from agent.exceptions import SharedStateDown
from agent.ratelimit import budget_holds_recover
from agent.services import spool_dir, spool_replay, spool_unwritable_reason
from ops import logs, tracing
from ops.metrics import turns_recovered_count

logger = logging.getLogger(__name__)


# Every 15 s (the sixth cron field is seconds): with a 30 s lease, a dead worker's turns are
# `interrupted` well within a minute.
@app.periodic(cron="* * * * * */15", periodic_id="recover")
@app.task(name="agent.turns_recover", queue="maintenance", queueing_lock="turns-recover")
async def turns_recover_periodic(timestamp: int) -> None:
    """Mark the running turns of workers that stopped renewing their lease as interrupted, and
    give back the tokens their holds kept on the budgets."""
    # database_sync_to_async, not asgiref's: procrastinate closes the connections of the job's
    # own thread only, and the pool thread's, killed by a database restart, stayed dead: the
    # recovery failed every 15 s from then on, a traceback each time (walk 24).
    recovered = await database_sync_to_async(turns_recover, thread_sensitive=False)(
        lease_seconds=settings.AGENT_LEASE_SECONDS
    )
    turns_recovered_count(count=len(recovered))  # these turns never reached their own count
    for turn in recovered:
        # The turn's own summary line died with its worker: this one leads to its transcript,
        # and to its trace, where a span says the same (the turn's own spans died with it).
        with logs.bound(
            turn_id=turn.turn_id, conversation_id=turn.conversation_id, trace_id=turn.trace_id
        ):
            logger.warning(
                "turn interrupted: its worker %s %s",
                turn.worker,
                "is gone (killed)" if turn.gone else "stopped renewing its lease (killed or stuck)",
            )
        tracing.turn_recovered_span(
            trace_id=turn.trace_id,
            turn_id=turn.turn_id,
            conversation_id=turn.conversation_id,
            worker=turn.worker,
            root_span_id=turn.root_span_id,
        )
    await _holds_recover(recovered)


async def _holds_recover(recovered: list[RecoveredTurn]) -> None:
    """Settle the recovered turns' holds, and those whose lease ended unrecovered, to what
    their checkpoints counted. Redis down, a hold waits: its lease has ended, and the next
    run's sweep finds it."""
    try:
        freed = await budget_holds_recover(turn_ids=[turn.turn_id for turn in recovered])
    except SharedStateDown:  # said once by agent.shared
        return
    conversations = {turn.turn_id: turn.conversation_id for turn in recovered}
    for turn_id, tokens in freed.items():
        if tokens:
            with logs.bound(turn_id=turn_id, conversation_id=conversations.get(turn_id, "")):
                logger.warning("gave back %d tokens its dead worker held on the budgets", tokens)


@app.periodic(cron="* * * * *", periodic_id="spool")
@app.task(name="agent.spool_drain", queue="maintenance", queueing_lock="spool-drain")
def spool_drain(timestamp: int) -> None:
    """Every minute: save turns spooled on this host while the database was down, and say
    when the spool stops (or starts again) taking writes."""
    reason = spool_unwritable_reason()
    _spool_state_say(reason)
    try:
        saved, _, failed = spool_replay()  # a full disk's spool still replays (and frees it)
    except OSError:
        if reason:  # said above: a traceback every minute would add nothing
            return
        raise
    if saved or failed:
        logger.warning("spool drained: %d turns saved, %d still failing", saved, failed)


_spool_said: list[str] = [""]  # the reason last said ('' : writable), once per change


def _spool_state_say(reason: str) -> None:
    """A full or broken spool disk showed only as docent_spool_writable 0: no line said it
    until a turn was lost in the next database outage (`turn ... lost`)."""
    if reason == _spool_said[0]:
        return
    if reason:
        logger.error(
            "the spool %s cannot be written (%s): a database outage now would lose turns "
            "instead of spooling them; free space on its disk or fix AGENT_SPOOL_DIR",
            spool_dir(),
            reason,
        )
    else:
        logger.warning("the spool %s can be written again", spool_dir())
    _spool_said[0] = reason
