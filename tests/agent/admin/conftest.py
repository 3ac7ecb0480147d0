"""Fixtures of the admin's browser tests: a signed-up editor with known data, and Chromium."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.agent.admin.factories import build_showcase

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@pytest.fixture
def showcase(transactional_db):
    get_user_model().objects.create_superuser("editor", "editor@example.com", "a-long-password")
    return build_showcase(now=timezone.now())


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    # The ORM is not touched while Playwright runs: its sync API keeps an event loop around.
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
