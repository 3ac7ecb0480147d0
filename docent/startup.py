"""Start-up steps shared by `serve` (one process) and the cluster's release and workers."""

import asyncio
import contextlib
import logging
import os
import socket
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, close_old_connections, connection
from django.db.migrations.executor import MigrationExecutor

from docent.selectors import admin_account_missing

if TYPE_CHECKING:
    from procrastinate import App

logger = logging.getLogger(__name__)


# The PostgreSQL advisory lock that serialises release steps (any constant shared by them).
RELEASE_LOCK = 0x646F63656E74  # "docent"
# Below this many open files, a web process may run out under load (each visitor's socket is one).
OPEN_FILES_ENOUGH = 4096


def release(*, say: Callable[[str], None]) -> None:
    """Migrate, load the demo articles into a new blog, queue a reindex scan, replay the spool.

    Run once per deploy (the cluster's `release` process, a Kubernetes Job), never by every
    web process. Indexing is queued, not done here, so the site can serve at once. Two at
    once (a Job retried while the first still runs, two `make run`s) take turns: the second
    waits for the first's lock, then finds nothing left to do.
    """
    with connection.cursor() as cursor:
        # Session-level: held across migrate's own transactions, let go if this process dies.
        cursor.execute("SELECT pg_advisory_lock(%s)", [RELEASE_LOCK])
    try:
        _release(say)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [RELEASE_LOCK])


def _release(say: Callable[[str], None]) -> None:
    from agent.services import spool_replay
    from blog.indexing import article_saves_unqueued, reindex_scan_enqueue
    from blog.selectors import article_ever_created
    from blog.services import demo_articles_load

    call_command("migrate", interactive=False, verbosity=0)
    # Not "no articles": an author who deleted the demo articles to start their own blog got
    # all fourteen back at the next start.
    first_run = not article_ever_created()
    if first_run:
        # Queued by the first-run scan instead, one job each, behind any author's save.
        with article_saves_unqueued():
            created, _ = demo_articles_load()
        say(f"Loaded {created} demo articles; they are indexed in the background.")
    reindex_scan_enqueue(first_run=first_run)
    saved, _, failed = spool_replay()
    if saved or failed:
        say(f"Spooled turns: {saved} saved, {failed} still failing.")


def schema_current() -> bool:
    """The database answers and every migration is applied (the release step has run)."""
    try:
        connection.ensure_connection()
        executor = MigrationExecutor(connection)
        return not executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return False
    finally:
        connection.close()


def release_wait(*, timeout: float, say: Callable[[str], None]) -> None:
    """Block until the release step has migrated the database (web and worker processes).

    Raises:
        TimeoutError: it did not happen within `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    announced = False
    while not schema_current():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the database was not migrated within {timeout:.0f} s")
        if not announced:
            say("Waiting for the release step (migrations) to finish...")
            announced = True
        time.sleep(0.5)


WORKER_RESTART_SECONDS = 5.0


def worker_start_in_process() -> asyncio.Task:
    """Run the task worker inside this process's event loop (the one-process `make run`).

    It goes through the same queue as the cluster's worker. The web code keeps queueing jobs
    through Django's connection (inside its transactions); the worker gets its own pooled
    psycopg connector, as `manage.py worker` does (Django's decodes no JSON and has no LISTEN).
    """
    # Indexing jobs share the lock "index" (one at a time); the second slot keeps turn
    # recovery and the spool drain on time while an indexing job runs.
    return asyncio.ensure_future(worker_keep_running(_worker_runs(concurrency=2)))


def _worker_runs(*, concurrency: int) -> Callable[[], Awaitable[None]]:
    """One run of the task worker on its own pooled connector, for `worker_keep_running`.

    Each run starts as `manage.py worker` does (`worker_run`): a `serve` killed and started
    again said nothing of its dead worker's row, which procrastinate pruned silently 30 s later.
    """
    from procrastinate.contrib.django import app

    worker_app = app.with_connector(app.connector.get_worker_connector())
    left: list[int] = []  # the ids of the runs that did not unregister, for the next run

    async def run() -> None:
        async with worker_app.open_async():
            await worker_run(worker_app, concurrency=concurrency, left=left)

    return run


async def worker_run(worker_app: "App", *, concurrency: int, left: list[int]) -> None:
    """Remove the rows this process's earlier workers left, say the dead ones, run a worker.

    procrastinate unregisters a worker only when it stops cleanly. One stopped by its dead
    database connection (an outage) left its row, and the next prune counted it in
    `docent_task_workers_lost_total` and said it "died without stopping (killed, out of
    memory, or its host lost)": DocentTaskWorkerKilled fired after every database outage.
    `left` carries the ids from one run to the next.
    """
    from procrastinate.worker import Worker

    from docent.tasks import STALLED_WORKER_SECONDS, workers_lost_forget

    while left:
        await worker_app.job_manager.unregister_worker(left[-1])  # its jobs count as stalled
        left.pop()
    await workers_lost_forget(worker_app.job_manager)
    worker_app.perform_import_paths()
    options = {
        **worker_app.worker_defaults,
        "install_signal_handlers": False,
        "concurrency": concurrency,
        # procrastinate's own prune at start, after ours: the same silence, not 30 s.
        "stalled_worker_timeout": STALLED_WORKER_SECONDS,
    }
    worker = Worker(app=worker_app, **options)
    try:
        await worker.run()
    finally:
        if worker.worker_id is not None:  # not unregistered: it did not stop cleanly
            left.append(worker.worker_id)


def worker_run_until_signalled(*, concurrency: int) -> None:
    """Run the task worker (`manage.py worker`) until SIGTERM or SIGINT, again whenever it stops.

    procrastinate stops its worker when its LISTEN connection fails, and the process then
    exited 0: a 20 s PostgreSQL outage in the cluster left only procrastinate's traceback and,
    under supervisord, a restart it logs at INFO (hidden at its `warn` level); no metric moved
    and `docent_queue_workers` read 0 until the new process registered. Now the process keeps
    its worker running as the one-process server does: one WARNING line per stop and
    `docent_task_worker_restarts_total`. A signal cancels it, which procrastinate takes as a
    graceful stop (the running jobs finish or are aborted, the worker unregisters).
    """
    import signal

    run = _worker_runs(concurrency=concurrency)

    async def until_signalled() -> None:
        keeper = asyncio.ensure_future(worker_keep_running(run))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, keeper.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await keeper

    asyncio.run(until_signalled())


async def worker_keep_running(run: Callable[[], Awaitable[None]]) -> None:
    """Run the worker again whenever it stops, until cancelled (the drain cancels it).

    procrastinate stops its worker when its LISTEN connection fails: a database restart
    left `make run` serving with no worker for good (the cluster's supervisord restarts its
    worker process; nothing restarted this one), and indexing, turn recovery and the spool
    drain piled up unseen.
    """
    from ops.metrics import task_worker_restart_count

    while True:
        try:
            await run()
            logger.warning("the task worker stopped; restarting in %.0f s", WORKER_RESTART_SECONDS)
        except Exception:
            logger.exception("the task worker failed; restarting in %.0f s", WORKER_RESTART_SECONDS)
        task_worker_restart_count()
        await asyncio.sleep(WORKER_RESTART_SECONDS)
        # The periodic deferrer queues through Django's connection, on the thread that
        # thread-sensitive calls share: killed with the database, it stopped each new
        # worker again until something closed it.
        await sync_to_async(close_old_connections)()


def ready_lines(*, host: str, port: int, admin_missing: bool = True) -> list[str]:
    """The lines that end start-up: the site, the admin, and how to get into it while no
    account exists (after the first `createsuperuser` the hint only misled: "create what?")."""
    base = f"http://{host}:{port}"
    lines = [f"Docent is serving on {base}/ (Ctrl-C stops)", f"Admin: {base}/admin/"]
    if admin_missing:
        lines.append("Create an admin account: .venv/bin/python manage.py createsuperuser")
    return lines


def serve_ready_lines(*, host: str, port: int) -> list[str]:
    """`ready_lines` for `serve`, which has migrated by then and can look for an account."""
    return ready_lines(host=host, port=port, admin_missing=admin_account_missing())


# How long `cluster_ready` waits for the cluster's first answer, and how often it asks.
CLUSTER_READY_SECONDS = 600.0
CLUSTER_READY_POLL_SECONDS = 0.5
# Once one web process is ready, how long the others get to be ready too before nginx is let
# through anyway (a process that crashes at start must not keep the site closed).
CLUSTER_LAGGARD_SECONDS = 30.0


def cluster_starting_line(*, host: str, port: int) -> str:
    """What `make run WORKERS=N` says before supervisord starts its processes."""
    return f"Docent is starting on http://{host}:{port}/; it says below when it serves."


def cluster_wait_ready(
    *,
    host: str,
    port: int,
    web_ports: list[int],
    seconds: float = CLUSTER_READY_SECONDS,
    poll: float = CLUSTER_READY_POLL_SECONDS,
    laggard: float = CLUSTER_LAGGARD_SECONDS,
) -> bool:
    """True once nginx listens on `host:port` and every web process answers `/readyz` with
    200 (or one does, and the others have had `laggard` seconds more).

    `make run WORKERS=2` printed "Docent is serving on …" before its processes started: the first
    page, 25 s later on a two-core machine, was a refused connection and nginx's 502. The web
    processes are asked directly: through nginx each refused try logged two errors. Let through
    once the first was ready, nginx sent a request to one still loading and logged
    `connect() failed (111: Connection refused)` at every start.
    """
    deadline = time.monotonic() + seconds
    waiting, first_ready = set(web_ports), 0.0
    while time.monotonic() < deadline:
        if _listening(host, port):
            waiting = {web for web in waiting if not _ready(web, poll)}
            if len(waiting) < len(web_ports) and not first_ready:
                first_ready = time.monotonic()
            if not waiting or (first_ready and time.monotonic() - first_ready >= laggard):
                return True
        time.sleep(poll)
    return bool(first_ready)


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((_dialable(host).strip("[]"), port), timeout=2):
            return True
    except OSError:
        return False


def _ready(port: int, poll: float) -> bool:
    # Asked as the site: a DEBUG-off web process refuses `127.0.0.1:<port>` (not in
    # DJANGO_ALLOWED_HOSTS), so the cluster never said it served and nginx kept the starting
    # page up for good (and the refusals wrote two WARNING lines each half second).
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/readyz", headers={"Host": probe_host()}
    )
    try:
        with urllib.request.urlopen(request, timeout=poll + 2) as answer:  # noqa: S310 - ours
            return answer.status == 200
    except (OSError, ValueError):
        return False  # not listening yet, or 503 until the database and Redis answer


def probe_host() -> str:
    """A Host the web processes accept: the first of ALLOWED_HOSTS, a pattern's own domain
    (".example.org" is example.org, "*" anything)."""
    for name in settings.ALLOWED_HOSTS:
        return "localhost" if name == "*" else name.removeprefix(".")
    return "localhost"  # none listed: DEBUG's own localhost


def _dialable(host: str) -> str:
    """The address to ask for a host nginx listens on: loopback for a wildcard, an IPv6
    address in brackets."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)  # noqa: S104
    return f"[{host}]" if ":" in host else host


def cluster_not_ready_line(*, host: str, port: int) -> str:
    minutes = round(CLUSTER_READY_SECONDS / 60)
    return (
        f"Docent is not answering on http://{host}:{port}/ after {minutes} minutes: "
        "the processes' lines above say why."
    )


def stopped_line() -> str:
    """The last line of `make run`: it stopped on purpose, and where the blog's data still is."""
    if "DATABASE_URL" in os.environ:
        db = settings.DATABASES["default"]
        place = f"the database {db['NAME']} at {db['HOST'] or 'localhost'}:{db['PORT'] or 5432}"
    else:
        place = _shown_path(Path(settings.EMBEDDED_PG_DATA))
    return f"Docent stopped; data kept in {place}"


def _shown_path(path: Path) -> str:
    # Relative to the checkout when inside it, as the person typed `make run` there.
    try:
        return str(path.resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path)


def open_files_raise() -> tuple[int, int]:
    """Raise this process's soft limit on open files to its hard limit: (before, after).

    Linux starts a process at a soft limit of 1,024 whatever its hard limit (often 524,288):
    a web process holding that many sockets, database connections and files could accept no
    more (EMFILE), and every new visitor, `/healthz` included, waited in the listen queue.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # Linux refuses an infinite limit on open files; its ceiling is fs.nr_open.
    wanted = _nr_open() if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:
        logger.warning("could not raise the open files limit from %d to %d: %s", soft, wanted, exc)
        return soft, soft
    return soft, wanted


# Set by `make run WORKERS=N` for its processes: the cluster command said the banner already.
DEBUG_BANNER_SAID = "DOCENT_DEBUG_BANNER_SAID"


def debug_banner() -> str:
    """What `make run` shouts when DEBUG is on."""
    bar = "!" * 72
    return (
        f"{bar}\n!! DEBUG IS ON: error pages show settings, paths and source code.\n"
        "!! Never expose this server to a network; set DJANGO_DEBUG=false to deploy.\n"
        f"!! (Non-loopback clients get the plain error pages anyway.)\n{bar}"
    )


def open_files_line(before: int, after: int) -> str:
    """What start-up says of the open files limit; a low one is worth an operator's look."""
    line = f"Open files: up to {after:,} per process"
    if after > before:
        line += f" (raised from {before:,})"
    if after < OPEN_FILES_ENOUGH:
        line += "; the hard limit is low for a web process (raise it: ulimit -Hn, LimitNOFILE)"
    return line


def _nr_open() -> int:
    try:
        return int(Path("/proc/sys/fs/nr_open").read_text())
    except (OSError, ValueError):
        return 1 << 20  # Linux's default


def quiet_daphne() -> None:
    """Daphne's HTTP/2 notice and endpoint lines are not the site owner's business."""
    logging.getLogger("daphne.server").setLevel(logging.WARNING)


def listen_endpoints(*, host: str, port: int, backlog: int) -> list[str]:
    """daphne's endpoint strings for `host:port`, listening with `backlog` pending connections."""
    from daphne.endpoints import build_endpoint_description_strings

    return [
        f"{endpoint}:backlog={backlog}"
        for endpoint in build_endpoint_description_strings(host=host, port=port)
    ]
