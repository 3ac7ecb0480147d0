"""Queued jobs of the assistant: recovering the turns of dead workers, draining the spool."""

import logging

from django.conf import settings
from procrastinate.contrib.django import app

from agent.checkpoints import turns_recover
from agent.services import spool_replay
from ops import logs
from ops.metrics import turns_recovered_count

logger = logging.getLogger(__name__)


# Every 15 s (the sixth cron field is seconds): with a 30 s lease, a dead worker's turns are
# `interrupted` well within a minute.
@app.periodic(cron="* * * * * */15", periodic_id="recover")
@app.task(name="agent.turns_recover", queue="maintenance", queueing_lock="turns-recover")
def turns_recover_periodic(timestamp: int) -> None:
    """Mark the running turns of workers that stopped renewing their lease as interrupted."""
    recovered = turns_recover(lease_seconds=settings.AGENT_LEASE_SECONDS)
    turns_recovered_count(count=len(recovered))  # these turns never reached their own count
    for turn in recovered:
        # The turn's own summary line died with its worker: this one leads to its transcript.
        with logs.bound(turn_id=turn.turn_id, conversation_id=turn.conversation_id):
            logger.warning(
                "turn interrupted: its worker %s stopped renewing its lease (killed or stuck)",
                turn.worker,
            )


@app.periodic(cron="* * * * *", periodic_id="spool")
@app.task(name="agent.spool_drain", queue="maintenance", queueing_lock="spool-drain")
def spool_drain(timestamp: int) -> None:
    """Every minute: save turns spooled on this host while the database was down."""
    saved, _, failed = spool_replay()
    if saved or failed:
        logger.warning("spool drained: %d turns saved, %d still failing", saved, failed)
