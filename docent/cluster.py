"""`make run WORKERS=N`: the Procfile's processes under supervisord, nginx in front.

The Procfile is the one list of processes. This module expands it for this machine (free
internal ports, N web processes, postgres and redis only when no URL names them) and writes
supervisord's and nginx's configuration under `.data/cluster/`.
"""

import html
import json
import math
import os
import re
import resource
import secrets
import shlex
import shutil
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.template import Engine
from django.utils import translation
from django.utils.csp import build_policy
from django.utils.translation import gettext as _

from config.proxy import networks_parse

PROCFILE = Path(settings.BASE_DIR) / "Procfile"
NGINX_TEMPLATE = Path(__file__).parent / "templates" / "docent" / "nginx.conf"
# The Debian package that provides each program the cluster runs.
SYSTEM_PACKAGES = {"nginx": "nginx-light", "redis-server": "redis-server"}


@dataclass
class Program:
    name: str
    command: str
    env: dict[str, str] = field(default_factory=dict)
    priority: int = 50
    once: bool = False  # the release step: runs to completion, restarted only if it fails


@dataclass
class Plan:
    workers: int
    host: str
    port: int
    data: Path
    web_ports: list[int]
    redis_port: int | None
    env: dict[str, str]
    programs: list[Program]
    redis_password: str = ""


def procfile_read(path: Path = PROCFILE) -> dict[str, str]:
    """`name: command` lines, comments and blank lines skipped."""
    entries = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, command = line.partition(":")
            entries[name.strip()] = command.strip()
    return entries


def missing_system_packages(*, need_redis: bool) -> list[str]:
    """Debian packages to install for the programs this cluster would run."""
    programs = ["nginx"] + (["redis-server"] if need_redis else [])
    return [SYSTEM_PACKAGES[p] for p in programs if shutil.which(p, path=_sbin_path()) is None]


def cluster_plan(*, workers: int, host: str, port: int, database_url: str) -> Plan:
    """Everything the cluster runs, with ports chosen and commands expanded."""
    data = Path(settings.BASE_DIR) / ".data" / "cluster"
    redis_url = os.environ.get("REDIS_URL", "")
    redis_port = None if redis_url else free_port()
    # Loopback is every local user's: without a password any of them could lift the limits,
    # budgets and conversation locks the workers share there.
    redis_password = "" if redis_url else secrets.token_urlsafe(24)
    redis_url = redis_url or f"redis://:{redis_password}@127.0.0.1:{redis_port}/0"
    web_ports = [free_port() for _ in range(workers)]
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "PYTHONUNBUFFERED": "1",
        "DJANGO_STATIC_MANIFEST": "true",
        "TASK_WORKER_IN_PROCESS": "false",
        # nginx is the only client of the web processes; it appends the client's address to
        # X-Forwarded-For. One hop, not "127.0.0.1/32": a visitor on loopback would otherwise
        # be skipped as a proxy and the address they wrote before it believed.
        "DJANGO_TRUSTED_PROXIES": "1",
        # ...and only from nginx: the web processes listen on loopback, every local user's, and
        # one who wrote X-Forwarded-For straight to a worker's port was any address it liked.
        "DJANGO_TRUSTED_PROXY_SECRET": secrets.token_urlsafe(24),
        # Every process writes its metrics here and any web process's /metrics adds them up.
        "PROMETHEUS_MULTIPROC_DIR": str(data / "prometheus"),
        # `manage.py cluster` says DEBUG's banner once, for all; its web processes do not.
        "DOCENT_DEBUG_BANNER_SAID": "1",
    }
    entries = procfile_read()
    values = {"DATA": str(data), "REDIS_PORT": str(redis_port or "")}
    programs = [Program("release", _python(entries["release"]), priority=20, once=True)]
    if not os.environ.get("DATABASE_URL"):
        programs.append(Program("postgres", _python(entries["postgres"]), priority=10))
    if redis_port:
        # Its own lines (a banner, "WARNING Memory overcommit must be enabled!", a production
        # host's concern) went to the console between Docent's; they go to its file instead.
        log = shlex.quote(str(data / "redis" / "redis.log"))
        redis = f"{_system(entries['redis'], values)} --logfile {log}"
        programs.append(Program("redis", redis, priority=10))
    programs.append(Program("worker", _python(entries["worker"]), priority=30))
    for number, web_port in enumerate(web_ports, start=1):
        command = _expand(entries["web"], values | {"PORT": str(web_port)})
        programs.append(Program(f"web{number}", _python(command), priority=40))
    programs.append(Program("proxy", _system(entries["proxy"], values), priority=50))
    # Not a deployment's process (the Procfile lists those): it prints "Docent is serving on …"
    # once a page answers, where the command printed it before anything had started.
    announce = (
        f"python manage.py cluster_ready --host {shlex.quote(host)} --port {port} "
        f"--web-ports {','.join(map(str, web_ports))} "
        f"--starting-file {shlex.quote(str(starting_marker(data / 'nginx')))}"
    )
    programs.append(Program("announce", _python(announce), priority=60, once=True))
    return Plan(workers, host, port, data, web_ports, redis_port, env, programs, redis_password)


def cluster_write(plan: Plan) -> Path:
    """Write nginx.conf, supervisord.conf and ports.json; return supervisord's config path."""
    nginx = plan.data / "nginx"
    nginx_prepare(nginx)
    # Until `cluster_ready` removes it, nginx answers with the starting page without trying the
    # web processes (nginx.conf): each try of one still booting logged an [error] line, two per
    # request, 90 lines on the console in a 55 s start for one reader's page refreshing itself.
    starting_marker(nginx).touch()
    _private_dir(plan.data / "redis")
    if plan.redis_port:  # read by redis-server, never on a command line (`ps` shows those)
        _private_write(plan.data / "redis" / "auth.conf", f"requirepass {plan.redis_password}\n")
    # A new cluster starts its metrics from zero: the last run's processes are all gone.
    shutil.rmtree(plan.data / "prometheus", ignore_errors=True)
    _private_dir(plan.data / "prometheus")  # it was 0755 with 0644 files: any local user read it
    secret = plan.env["DJANGO_TRUSTED_PROXY_SECRET"]
    _private_write(  # it holds the proxy's secret
        nginx / "nginx.conf",
        nginx_conf(
            prefix=nginx,
            web_ports=plan.web_ports,
            host=plan.host,
            port=plan.port,
            proxy_secret=secret,
        ),
    )
    conf = plan.data / "supervisord.conf"
    _private_write(conf, supervisord_conf(plan))  # the processes' environment: REDIS_URL's password
    (plan.data / "ports.json").write_text(
        json.dumps(
            {
                "url": f"http://{plan.host}:{plan.port}",
                "web": plan.web_ports,
                "redis": plan.redis_port,
                "supervisord_conf": str(conf),
            }
        )
    )
    return conf


def _private_dir(path: Path) -> None:
    """Make `path` a directory this user alone may enter, whatever mode an older run left.

    Redis keeps its append-only file there, and the limits' keys name the visitors' session
    keys (`rl:s:<key>`, the cookie itself: a signed-in editor's is their admin session).
    redis-server writes the file with the umask, 0644: any local user read the keys in it.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)


def _private_write(path: Path, text: str) -> None:
    """Write `path` readable by this user only, from its first byte."""
    path.unlink(missing_ok=True)  # an older file keeps its mode: make a new one
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write(text)


NGINX_CONN_MAX = 65_535
# nginx's connections, at most: about 440 bytes each, allocated at start (65,536: 31 MB).
NGINX_CONNECTIONS_MAX = 65_536
# Open files when the hard limit is "unlimited" (Linux's default fs.nr_open).
NGINX_OPEN_FILES_MAX = 1_048_576


# nginx's own refusals of a page, each answered with the pages' headers (nginx.conf): the code
# nginx raises, the status sent (494, a header too large, goes out as 400, as nginx sends it)
# and the words. A request line too long (414) goes to an internal URI, not a named location:
# sent to one, it became a 500 (the request has no URI yet).
PAGE_REFUSALS = [
    (400, 400, "Bad request."),
    (494, 400, "Bad request: a header is too large."),
    (413, 413, "The request body is larger than this server accepts."),
    (414, 414, "The request's address is longer than this server accepts."),
    (429, 429, "Too many requests from your address. Try again in a moment."),
    # A body coding nginx does not decode (Transfer-Encoding: gzip), a version past HTTP/1.1
    # on its request line: its bare pages, with none of the headers, before.
    (501, 501, "The request's transfer coding is not supported."),
    (505, 505, "The request's HTTP version is not supported."),
]  # 502 and 504 (no web process answered) get the page that loads the site again by itself


def nginx_conf(
    *,
    prefix: Path,
    web_ports: list[int],
    host: str,
    port: int,
    per_address: int | None = None,
    request_burst: int | None = None,
    per_network: int | None = None,
    network_burst: int | None = None,
    real_ip_from: tuple | None = None,
    proxy_secret: str = "",
) -> str:
    """nginx in front of the web processes; `prefix` holds its pid and temporary files.

    `per_address`: open connections per visitor address (default HTTP_CONNECTIONS_PER_IP).
    `request_burst`: requests a visitor address may send at once (HTTP_REQUEST_BURST_PER_IP),
    refilled at HTTP_REQUESTS_PER_SECOND_PER_IP. `per_network` and `network_burst`: the same
    for an IPv6 /48 (HTTP_CONNECTIONS_PER_NETWORK, HTTP_REQUEST_BURST_PER_NETWORK).
    `real_ip_from`: the networks of balancers in front of nginx (NGINX_REAL_IP_FROM).
    `proxy_secret`: sent to the web processes in X-Docent-Proxy (DJANGO_TRUSTED_PROXY_SECRET).
    """
    open_files, connections = nginx_open_files()
    networks = settings.NGINX_REAL_IP_FROM if real_ip_from is None else real_ip_from
    request_burst = request_burst or settings.HTTP_REQUEST_BURST_PER_IP
    network_burst = network_burst or settings.HTTP_REQUEST_BURST_PER_NETWORK
    share = settings.HTTP_FOREIGN_REQUEST_SHARE  # another site's page's requests: their own buckets
    context = {
        # nginx refuses a limit_conn of 65,536 or more (the benches set 100,000,000 for "none").
        "per_address": min(per_address or settings.HTTP_CONNECTIONS_PER_IP, NGINX_CONN_MAX),
        "per_network": min(per_network or settings.HTTP_CONNECTIONS_PER_NETWORK, NGINX_CONN_MAX),
        "requests_per_minute": _per_minute(settings.HTTP_REQUESTS_PER_SECOND_PER_IP),
        "network_requests_per_minute": _per_minute(settings.HTTP_REQUESTS_PER_SECOND_PER_NETWORK),
        "request_burst": request_burst,
        # What nginx's 429 under /api/ says in Retry-After: one request's refill, as the web
        # processes say it for their own bucket (config/request_rate.py).
        "retry_after": max(1, math.ceil(1 / settings.HTTP_REQUESTS_PER_SECOND_PER_IP)),
        "page_refusals": PAGE_REFUSALS,
        # A static file gets the pages' policy, as a web process sends it (an SVG opened on its
        # own runs the scripts it holds unless a policy says otherwise).
        "content_security_policy": build_policy(settings.SECURE_CSP),
        "network_burst": network_burst,
        "foreign_requests_per_minute": _per_minute(
            share * settings.HTTP_REQUESTS_PER_SECOND_PER_IP
        ),
        "foreign_network_requests_per_minute": _per_minute(
            share * settings.HTTP_REQUESTS_PER_SECOND_PER_NETWORK
        ),
        "foreign_request_burst": max(1, round(share * request_burst)),
        "foreign_network_burst": max(1, round(share * network_burst)),
        "prefix": str(prefix),
        "web_ports": web_ports,
        # An IPv6 address is bracketed: `listen ::1:8000` is refused ("invalid port").
        "listen": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "static_root": str(settings.STATIC_ROOT),
        "open_files": open_files,
        "connections": connections,
        "head_ms": max(1, round(settings.HTTP_HEAD_SECONDS * 1000)),
        # The largest chat body nginx collects before passing it on (see the template).
        "chat_body_bytes": settings.WEBSOCKET_MAX_MESSAGE_BYTES,
        "chat_frame_bytes": f"{settings.AGENT_MAX_FRAME_BYTES:,}",  # as agent.frames says it
        # Written into the configuration: parsed as networks, never passed on as text.
        "real_ip_from": [str(network) for network in networks_parse(networks)],
        # URL-safe characters only (secrets.token_urlsafe): nothing nginx would read as syntax.
        "proxy_secret": proxy_secret,
        "language_cookie": settings.LANGUAGE_COOKIE_NAME,
        "unavailable": unavailable_pages(),
        "unavailable_retry": UNAVAILABLE_RETRY_SECONDS,
    }
    return _nginx_render(NGINX_TEMPLATE.name, context)


# How often the page nginx writes when no web process answers loads the site again.
UNAVAILABLE_RETRY_SECONDS = 5


def unavailable_pages() -> list[dict[str, str]]:
    """The words of the page nginx writes when no web process answers (while `make run
    WORKERS=N` starts, after it printed that it serves; or every process down), in each of the
    site's languages: nginx's own "502 Bad Gateway" said nothing to a visitor or an operator.
    Escaped for HTML and for a double-quoted nginx string ($ would name a variable)."""
    pages = []
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            title = _("Docent is starting or restarting")
            text = _(
                "The site isn’t answering right now; while it starts, that takes a few seconds. "
                "This page loads it again by itself every %(seconds)s seconds."
            ) % {"seconds": UNAVAILABLE_RETRY_SECONDS}
        pages.append({"code": code, "title": _nginx_html(title), "text": _nginx_html(text)})
    return pages


def _nginx_html(text: str) -> str:
    return html.escape(text).replace("$", "&#36;").replace("\\", "&#92;")


def nginx_open_files() -> tuple[int, int]:
    """The open files nginx asks for (`worker_rlimit_nofile`: the hard limit it inherits from
    this process, as supervisord passes it on) and its `worker_connections`, fewer: out of
    connections nginx closes idle ones to make room, out of files it accepts nothing."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY or hard > NGINX_OPEN_FILES_MAX:
        hard = NGINX_OPEN_FILES_MAX
    # Files besides connections: the log, the listening socket, a static file being sent.
    connections = min(NGINX_CONNECTIONS_MAX, hard - max(64, hard // 16))
    return hard, max(connections, 256)


def nginx_visitor_maps() -> str:
    """The `map` blocks that set $visitor_address and $visitor_network, the keys of nginx's
    per-visitor limits (the IPv6 prefix a visitor counts under, as the web processes count it)."""
    return _nginx_render("nginx_visitors.conf", {})


def _nginx_render(name: str, context: dict) -> str:
    # Not HTML: render_to_string makes the Context with the Engine's autoescape (a Context of
    # one's own escapes for HTML unless told otherwise, and nginx wrote "The request&#x27;s
    # address…" as plain text). What a page shows is escaped where it is made (_nginx_html).
    engine = Engine(dirs=[str(NGINX_TEMPLATE.parent)], autoescape=False)
    return engine.render_to_string(name, context)


def _per_minute(per_second: float) -> int:
    # nginx takes whole requests per minute ("600r/m"), so a rate under 1/s still works.
    return max(1, round(per_second * 60))


def starting_marker(prefix: Path) -> Path:
    """The file whose presence tells nginx the web processes are still starting."""
    return prefix / "starting"


def nginx_prepare(prefix: Path) -> None:
    """The temporary directories nginx writes under its prefix."""
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)


def supervisord_conf(plan: Plan) -> str:
    """supervisord restarts any process that dies; the release step runs once."""
    data = plan.data
    env = ",".join(f'{key}="{value}"' for key, value in plan.env.items())
    secret = secrets.token_hex(16)  # supervisorctl's socket is local, but not everyone's
    lines = [
        "[supervisord]",
        "nodaemon=true",
        *(["user=root"] if os.geteuid() == 0 else []),
        f"logfile={data}/supervisord.log",
        f"pidfile={data}/supervisord.pid",
        f"childlogdir={data}",
        "loglevel=warn",
        f"environment={env}",
        "",
        "[unix_http_server]",
        f"file={data}/supervisor.sock",
        "chmod=0700",
        "username=docent",
        f"password={secret}",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{data}/supervisor.sock",
        "username=docent",
        f"password={secret}",
    ]
    stop_wait = int(settings.AGENT_DRAIN_SECONDS) + 20
    for program in plan.programs:
        lines += [
            "",
            f"[program:{program.name}]",
            f"command={program.command}",
            f"directory={settings.BASE_DIR}",
            f"priority={program.priority}",
            "autostart=true",
            # The release step exits 0 when done; only a failure is retried.
            f"autorestart={'unexpected' if program.once else 'true'}",
            f"startsecs={0 if program.once else 2}",
            "startretries=20",
            "exitcodes=0",
            "stopsignal=TERM",
            f"stopwaitsecs={stop_wait}",
            "stopasgroup=true",
            "killasgroup=true",
            "redirect_stderr=true",
            "stdout_logfile=/dev/stdout",
            "stdout_logfile_maxbytes=0",
        ]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _python(command: str) -> str:
    # The Procfile says `python`; the cluster runs this virtualenv's interpreter.
    return re.sub(r"^python\b", shlex.quote(sys.executable), command)


def _expand(command: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], command)


def _system(command: str, values: dict[str, str]) -> str:
    # supervisord's PATH may lack /usr/sbin, where Debian puts nginx.
    program, _, rest = _expand(command, values).partition(" ")
    return f"{shutil.which(program, path=_sbin_path()) or program} {rest}"


def _sbin_path() -> str:
    return os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/local/sbin"
