"""Configuration errors are one clear line, and production settings pass `check --deploy`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.database import parse_database_url

ROOT = Path(__file__).resolve().parents[2]
PROD_KEY = "k" * 30 + "-production-secret-0123456789abcdef"


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_debug_off_requires_a_secret_key():
    result = manage(
        "check", DJANGO_DEBUG="false", DJANGO_SECRET_KEY="", DJANGO_ALLOWED_HOSTS="example.com"
    )

    assert result.returncode == 1
    assert "docent: error: DJANGO_DEBUG is off: set DJANGO_SECRET_KEY" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "name",
    [
        "AGENT_FRAMES_PER_MINUTE",
        "AGENT_FRAMES_PER_MINUTE_PER_IP",
        "AGENT_TURNS_PER_CONVERSATION",
        "AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP",
        "WEBSOCKET_FRAMES_PER_MINUTE",
    ],
)
def test_a_limit_below_one_is_one_clear_line(name):
    result = manage("check", **{name: "0"})

    assert result.returncode == 1
    assert f"{name} must be at least 1." in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("cap", ["-1", "10000001"])
def test_an_output_cap_a_turn_record_cannot_hold_is_one_clear_line(cap):
    # Each retried attempt and each step may be charged the cap: at 10^9, a turn of three
    # silent attempts was charged 3 x 10^9, past the 32-bit token columns, and never saved.
    result = manage("check", AGENT_MAX_COMPLETION_TOKENS=cap)

    assert result.returncode == 1
    assert "AGENT_MAX_COMPLETION_TOKENS must be 0 (not sent) or more, at most" in result.stderr
    assert "Traceback" not in result.stderr


def test_debug_off_requires_allowed_hosts():
    result = manage(
        "check", DJANGO_DEBUG="false", DJANGO_SECRET_KEY=PROD_KEY, DJANGO_ALLOWED_HOSTS=""
    )

    assert result.returncode == 1
    assert "set DJANGO_ALLOWED_HOSTS to the site's host names" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_wrong_database_url_is_one_clear_line():
    result = manage("check", DATABASE_URL="mysql://u:p@localhost/db")

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "docent: error: DATABASE_URL must be a PostgreSQL URL "
        "(postgresql://user:pass@host:5432/name), got scheme 'mysql'."
    ]


def test_an_unreachable_database_is_one_clear_line():
    result = manage("migrate", DATABASE_URL="postgresql://nobody@127.0.0.1:9/nowhere")

    assert result.returncode == 1
    assert result.stderr.startswith("docent: error: cannot reach the database")
    assert "Traceback" not in result.stderr


def test_production_settings_pass_check_deploy():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="docent.example.com",
    )

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgresql://app:s%40cret@db.internal:6543/docent?sslmode=require",
            {
                "NAME": "docent",
                "USER": "app",
                "PASSWORD": "s@cret",
                "HOST": "db.internal",
                "PORT": "6543",
                "OPTIONS": {"sslmode": "require"},
            },
        ),
        (
            "postgresql://postgres:@/postgres?host=/tmp/pg",
            {"NAME": "postgres", "USER": "postgres", "HOST": "/tmp/pg", "PORT": "", "OPTIONS": {}},
        ),
    ],
)
def test_database_urls_parse(url, expected):
    config = parse_database_url(url)

    assert {key: config[key] for key in expected} == expected


def test_naming_the_hosts_turns_debug_off_by_default():
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_DEBUG"}
    env.update(DJANGO_ALLOWED_HOSTS="docent.example.com", DJANGO_SECRET_KEY="")
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "DJANGO_ALLOWED_HOSTS is set, so DEBUG is off: set DJANGO_SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    ("redis_url", "layer", "cache"),
    [
        ("", "channels.layers.InMemoryChannelLayer", "LocMemCache"),
        ("redis://127.0.0.1:6390/0", "channels_redis.core.RedisChannelLayer", "RedisCache"),
    ],
)
def test_redis_url_switches_the_channel_layer_and_the_shared_cache(redis_url, layer, cache):
    code = (
        "from django.conf import settings as s; "
        "print(s.CHANNEL_LAYERS['default']['BACKEND'], s.CACHES['default']['BACKEND'])"
    )
    result = manage("shell", "-c", code, REDIS_URL=redis_url)

    backend, cache_backend = result.stdout.strip().splitlines()[-1].split()
    assert backend == layer
    assert cache_backend.endswith(cache)
