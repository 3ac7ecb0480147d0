"""What a test's logger writes through one handler, formatter and filters of ours."""

import io
import logging
from collections.abc import Callable


def log_through(
    formatter: logging.Formatter, emit: Callable[[logging.Logger], None], *filters: logging.Filter
) -> str:
    """The text written while `emit` logs to a logger of its own, through `filters`."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    for log_filter in filters:
        handler.addFilter(log_filter)
    logger = logging.getLogger("tests.ops.logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()
