"""A database outage under the pages, the admin and the API: 503 and a page that says so
(config/outage.py), through a real outage of the test database."""

import uuid

import pytest
from django.test import Client

from tests.agent.test_persistence import database_outage  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ["/", "/articles/outage/", "/admin/", "/admin/agent/conversation/dashboard/"]


@pytest.fixture
def signed_in(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.mark.parametrize("path", PAGES)
def test_pages_say_the_site_is_briefly_unavailable(signed_in, make_article, database_outage, path):  # noqa: F811
    # With the database stopped every page was Django's traceback (DEBUG on, `make run`) or
    # "Server Error (500)", and the log had a 50-line traceback per request.
    make_article(title="Outage", slug="outage", body="Still here.")
    database_outage.begin()
    response = signed_in.get(path)

    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    html = response.content.decode()
    assert "Docent is briefly unavailable" in html
    assert "It can’t reach its database right now. Please try again in a minute." in html
    assert "Traceback" not in html and "OperationalError" not in html
    assert 'id="chat"' not in html  # the panel reads the database too

    database_outage.end()
    assert signed_in.get(path).status_code in (200, 302)


def test_the_page_is_in_the_reader_s_language(database_outage):  # noqa: F811
    database_outage.begin()
    response = Client().get("/", headers={"accept-language": "zh-CN,zh;q=0.9"})
    assert response.status_code == 503
    html = response.content.decode()
    assert "Docent 暂时无法访问" in html and "网站现在连不上数据库，请过一分钟再试。" in html
    assert '<html lang="zh-Hans">' in html


def test_whoever_runs_make_run_reads_why(settings, database_outage):  # noqa: F811
    # DEBUG on, on this machine: the error's first line, as the traceback's title said it.
    settings.DEBUG = True
    database_outage.begin()
    html = Client().get("/").content.decode()
    assert '<p class="outage-reason"><code>' in html
    assert "is not currently accepting connections" in html
    settings.DEBUG = False
    assert "outage-reason" not in Client().get("/").content.decode()


def test_the_api_answers_503_in_json(database_outage):  # noqa: F811
    database_outage.begin()
    response = Client().get(f"/api/conversations/{uuid.uuid4()}")
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json() == {"detail": "The database is unavailable right now. Please try again."}


def test_other_errors_are_not_taken_for_an_outage(signed_in):
    # A missing page is still a 404, and a sound database is no outage.
    assert signed_in.get("/articles/no-such-article/").status_code == 404
    assert signed_in.get("/").status_code == 200


@pytest.mark.asyncio
async def test_a_chat_socket_is_refused_with_one_line_not_a_traceback(database_outage, caplog):  # noqa: F811
    # The panel's socket reads the visitor's session and user before it opens: in an outage
    # each attempt (an open panel retries every few seconds) logged daphne's "Exception inside
    # application" and an 80-line traceback.
    from channels.testing import WebsocketCommunicator

    from config.asgi import application
    from tests.agent.chat_helpers import HOST, ORIGIN

    database_outage.begin()
    cookie = (b"cookie", b"sessionid=" + b"a" * 32)  # a returning visitor: their session is read
    socket = WebsocketCommunicator(application, "/ws/chat/", headers=[ORIGIN, HOST, cookie])
    connected, _ = await socket.connect(timeout=10)
    database_outage.end()

    assert not connected  # closed at the handshake: daphne answers it 403
    lines = [r for r in caplog.records if r.name == "config.outage"]
    assert [r.getMessage()[:39] for r in lines] == ["database unavailable for /ws/chat/: con"]
    assert not [r for r in caplog.records if r.exc_info]
