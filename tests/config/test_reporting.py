"""The debug page's settings: a password written into a URL is stars, the rest of it is kept."""

import pytest

from config.reporting import CredentialsFilter, url_passwords_hidden

STARS = CredentialsFilter.cleansed_substitute


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("redis://:pw@127.0.0.1:6379/0", f"redis://:{STARS}@127.0.0.1:6379/0"),
        ("rediss://user:p%40ss@cache.example/1", f"rediss://user:{STARS}@cache.example/1"),
        (
            "unix:///run/redis.sock?db=0&password=pw",
            f"unix:///run/redis.sock?db=0&password={STARS}",
        ),
        ("postgres://user@db.example/docent", "postgres://user@db.example/docent"),
        ("https://api.example/v1?q=1", "https://api.example/v1?q=1"),
    ],
)
def test_a_urls_password_is_hidden(text, shown):
    assert url_passwords_hidden(text) == shown


def test_nested_settings_are_cleansed_too():
    caches = {"default": {"LOCATION": "redis://:pw@127.0.0.1/0"}}
    layers = {"default": {"CONFIG": {"hosts": ["redis://:pw@127.0.0.1/0"]}}}

    cleansed = CredentialsFilter()

    assert cleansed.cleanse_setting("CACHES", caches)["default"]["LOCATION"] == (
        f"redis://:{STARS}@127.0.0.1/0"
    )
    assert "pw" not in str(cleansed.cleanse_setting("CHANNEL_LAYERS", layers))
