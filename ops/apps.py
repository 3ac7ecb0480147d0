from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from agent import events
        from agent.models import Turn
        from ops import metrics, multiproc

        multiproc.process_start()
        # The turn's statuses and error codes are the agent's, named once there.
        ended = [status for status in Turn.Status.values if status != Turn.Status.RUNNING]
        # max_steps and cancelled are statuses of their own, never an `error` turn's code.
        codes = sorted(events.ERROR_CODES - {events.MAX_STEPS, events.CANCELLED})
        metrics.turn_endings_zeroed(statuses=ended, error_codes=codes)
