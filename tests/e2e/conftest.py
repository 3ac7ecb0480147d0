"""Browser tests: the real site under daphne, a scripted model server, Debian's Chromium.

One browser and one server per configuration (scripted model / offline) for the package.
The demo articles are committed to pytest-django's test database so that the daphne
subprocess sees them; they are flushed again when the package is done.
"""

import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connections

from testing_support.live_server import ARTIFACTS, LiveServer, database_url
from testing_support.model_server import ScriptedOpenAIServer

SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 360, "height": 740}
PASSWORD = "a-long-password"


def sign_in(page, site: str, username: str = "editor", password: str = PASSWORD) -> None:
    """Sign in to the admin through its login form and wait for its index."""
    page.goto(f"{site}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{site}/admin/")


@pytest.fixture(scope="package")
def live_data(django_db_setup, django_db_blocker):
    """Commit the demo articles (indexed when the knowledge base exists); the test db's URL."""
    from django.db import connection

    from blog.services import demo_articles_load

    with django_db_blocker.unblock():
        demo_articles_load()
        _index()
        name = connection.settings_dict["NAME"]
        connection.close()
    yield database_url(name)
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)
        # The jobs the site queued for real (an article saved in its admin), which flush leaves
        # (procrastinate's tables are not Django's to flush): a job still queued for
        # "article-index-15" refused the admin tests' own at their setup when they ran next in
        # this worker.
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE procrastinate_jobs, procrastinate_workers CASCADE")
        connection.close()


def _index() -> None:
    # Saving the articles queued jobs (in memory in tests); index them here instead.
    call_command("reindex", verbosity=0)


@pytest.fixture
def articles(live_data):
    """slug -> {"id", "title"} of the committed demo articles."""
    from blog.models import Article

    return {a.slug: {"id": a.pk, "title": a.title} for a in Article.objects.all()}


@pytest.fixture(scope="package")
def model_server():
    """The scripted OpenAI-compatible server the `site` subprocess talks to."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def scripted(model_server):
    """The model server, emptied before and checked after each test."""
    model_server.reset()
    yield model_server
    leftover = model_server.pending
    model_server.reset()
    assert leftover == 0, f"{leftover} scripted responses were never requested"


@pytest.fixture(scope="package")
def site(live_data, model_server, tmp_path_factory):
    """The site with the scripted model; two steps per turn so max_steps is easy to reach."""
    env = {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_MAX_STEPS": "2",
        "AGENT_MODEL_MAX_RETRIES": "0",
    }
    with LiveServer("scripted", live_data, env, tmp_path_factory.mktemp("spool")) as server:
        _search_warmed(server.url)
        yield server.url


@pytest.fixture(scope="package")
def offline_site(live_data, tmp_path_factory):
    """The site without a model endpoint: the built-in offline model answers."""
    with LiveServer("offline", live_data, {}, tmp_path_factory.mktemp("spool")) as server:
        _search_warmed(server.url)
        yield server.url


def _search_warmed(url: str) -> None:
    """One search before any test: the first loads the embedding model (LiveServer does not
    warm it at start), seconds on a loaded machine, and whichever test searched first paid
    for it inside its 10 s waits (a search step still running when `wait_answered` gave up)."""
    import httpx

    reply = httpx.get(f"{url}/api/search", params={"q": "warm up"}, timeout=180)
    assert reply.status_code == 200, reply.text


@pytest.fixture(scope="package")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # A loaded CI machine may need a while for the first search (it loads the embedding model).
    expect.set_options(timeout=10_000)

    # Playwright's sync API runs an event loop in this thread; the tests' ORM reads are still
    # plain blocking calls, so tell Django's async-safety check that this is intended.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
            # While Playwright's loop runs, Django keeps this thread's connection in a context
            # variable; close it now, or it outlives the tests and blocks the test db's drop.
            connections.close_all()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Watch:
    """What a page did that a test did not ask for: dialogs, uncaught errors, CSP reports."""

    def __init__(self, page) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.console: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", self._console)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message) -> None:
        if message.type == "error":
            self.console.append(message.text)

    def assert_quiet(self) -> None:
        assert self.dialogs == []
        assert self.errors == []
        assert [m for m in self.console if "Content Security Policy" in m or "Refused" in m] == []


@pytest.fixture
def open_page(browser):
    """Open pages in fresh contexts (a new visitor each: new cookies, new storage)."""
    contexts = []
    watches = []

    def make(viewport: dict | None = None, locale: str = "en-US", **options):
        context = browser.new_context(
            viewport=viewport or DESKTOP,
            locale=locale,
            device_scale_factor=1 if viewport is None else 2,
            **options,
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        watch = Watch(page)
        watches.append(watch)
        page.watch = watch
        return page

    yield make
    for context in contexts:
        context.close()
    for watch in watches:
        watch.assert_quiet()


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"chat-{name}.png"
    page.screenshot(path=str(path))
    return path
