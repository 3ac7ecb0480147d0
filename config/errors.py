"""Turn configuration and connection failures into one clear line instead of a traceback."""

import sys

from django.core.exceptions import ImproperlyConfigured


class DatabaseUnavailable(ImproperlyConfigured):
    """The configured database cannot be reached or started."""


def run_or_explain(argv: list[str]) -> None:
    """Run a management command; print configuration errors as `docent: error: ...`."""
    from django.db.utils import OperationalError

    try:
        from django.core.management import execute_from_command_line

        execute_from_command_line(argv)
    except ImproperlyConfigured as exc:
        _fail(str(exc))
    except OperationalError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        _fail(
            f"cannot reach the database ({first_line}). Check DATABASE_URL, "
            "or unset it to use the embedded PostgreSQL."
        )


def _fail(message: str) -> None:
    print(f"docent: error: {message}", file=sys.stderr)
    sys.exit(1)
