import pytest
from django.contrib.auth import get_user_model
from xdist.scheduler import LoadScopeScheduling

from blog.models import Article, Tag

BROWSER_TESTS = "tests/e2e/"


class ModuleScheduling(LoadScopeScheduling):
    """Under xdist (`make test`), hand each worker whole modules, so a module's servers start
    once, and all browser tests as one unit, so their package-scoped site indexes the demo
    articles (about a minute of embedding) once and is never torn down and rebuilt between
    modules. xdist's own `loadgroup` would do this from `xdist_group` marks, but with pytest 9
    the group it writes into the node id is lost (pytest-dev/pytest-xdist#1386), so the unit
    is read from the node id here instead. The biggest units go first (xdist's reordering)."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return BROWSER_TESTS if module.startswith(BROWSER_TESTS) else module


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    """`--dist loadscope` (the Makefile's) means ours; any other mode keeps xdist's."""
    if config.getvalue("dist") == "loadscope":
        return ModuleScheduling(config, log)
    return None


@pytest.fixture
def make_article(db):
    """Create an article; published unless told otherwise."""

    def make(**fields) -> Article:
        tags = fields.pop("tags", [])
        fields.setdefault("title", "An article")
        fields.setdefault("slug", fields["title"].lower().replace(" ", "-"))
        fields.setdefault("body", "Some **body** text.")
        fields.setdefault("status", Article.Status.PUBLISHED)
        article = Article.objects.create(**fields)
        for name in tags:
            tag, _ = Tag.objects.get_or_create(name=name, defaults={"slug": name})
            article.tags.add(tag)
        return article

    return make


@pytest.fixture
def staff_client(client, db):
    user = get_user_model().objects.create_user(
        "editor", password="pw", is_staff=True, is_superuser=True
    )
    client.force_login(user)
    return client


@pytest.fixture(scope="session", autouse=True)
def task_queue():
    """procrastinate's in-memory connector for the whole run: deferring writes no job rows."""
    from procrastinate import testing
    from procrastinate.contrib.django import app

    connector = testing.InMemoryConnector()
    with app.replace_connector(connector):
        yield connector


@pytest.fixture(autouse=True)
def _task_queue_empty(task_queue):
    task_queue.reset()


@pytest.fixture(autouse=True)
def _process_state_reset():
    """Each test leaves the thread's language and the start-up warm-up flag as it found them.

    A request through LocaleMiddleware leaves its language active in the thread, and
    `docent.lifecycle.on_startup` raises the warm-up flag for a reactor that never runs here:
    both leaked into whichever test ran next in the same worker ("38 毫秒" where "38 ms" was
    asserted; a stall logged as the model's warm-up), depending on the random order.
    """
    yield
    from django.utils import translation

    from ops import loop_lag

    translation.deactivate()
    loop_lag.warming_up.clear()


@pytest.fixture
def run_jobs(task_queue):
    """Run every queued job now, through procrastinate's own worker, then return.

    Jobs of the given queues run in worker threads with their own database connections, so
    tests that use this need `django_db(transaction=True)` for the jobs to see their data.
    """
    from procrastinate.contrib.django import app

    def run(queues: tuple[str, ...] = ("index",)) -> list[dict]:
        # The worker also defers the periodic jobs ("maintenance"); tests run those by name.
        app.run_worker(
            queues=list(queues), wait=False, install_signal_handlers=False, listen_notify=False
        )
        return task_queue.finished_jobs

    return run


@pytest.fixture(autouse=True)
def _search_vocabulary_fresh(settings):
    """Each test has its own chunks; the cached vocabulary must not outlive them.

    Search runs its halves on one connection: a second one could not see the rows of a test
    that runs inside a transaction (tests/blog/test_parallel.py covers the parallel path).
    """
    from blog.embeddings import embedding_dimensions_forget
    from blog.relevance import vocabulary

    settings.SEARCH_PARALLEL = False
    # The per-process caches describe one test's data: the blog's vocabulary, and "the column
    # holds this width" (a test that converts the column and rolls back leaves it stale).
    vocabulary.invalidate()
    embedding_dimensions_forget()
    yield
    vocabulary.invalidate()
    embedding_dimensions_forget()
