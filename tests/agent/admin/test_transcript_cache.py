"""A transcript renders each answer's Markdown once, not on every view
(agent.selectors.turn_answers_html), in the reviewer's language, and when the cache is down."""

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import override_settings

import agent.selectors.answer_html
from config.settings import redis_cache
from tests.agent.admin.factories import make_conversation, make_turn
from tests.blog.test_body_cache import _closed_port

pytestmark = pytest.mark.django_db

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
ANSWERS = [
    "Use **HNSW**: see [the notes](https://example.org/hnsw).",
    "| 索引 | 召回率 |\n| --- | --- |\n| `hnsw` | 0.99 |",
    "",  # a turn stopped before it wrote a word
]


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    cache.clear()  # the test process's memory cache outlives a test
    yield
    cache.clear()


@pytest.fixture
def renders(monkeypatch) -> list[str]:
    """The answers the renderer was asked for."""
    calls: list[str] = []
    real = agent.selectors.answer_html.answer_to_html

    def counted(text: str, *, external_label: str) -> str:
        calls.append(text)
        return real(text, external_label=external_label)

    monkeypatch.setattr(agent.selectors.answer_html, "answer_to_html", counted)
    return calls


@pytest.fixture
def transcript_url() -> str:
    conversation = make_conversation()
    for index, answer in enumerate(ANSWERS, start=1):
        make_turn(conversation, index=index, answer=answer)
    return f"/admin/agent/conversation/{conversation.pk}/change/"


def test_a_second_view_of_a_transcript_renders_no_answer_again(
    staff_client, transcript_url, renders
):
    # Each view rendered every answer: 100 answers of tables, code and lists took 2.6 s a view
    # on the test client, 0.6 s once each was rendered once.
    pages = [staff_client.get(transcript_url).content.decode() for _ in range(3)]

    assert all("Use <strong>HNSW</strong>" in page and "<code>hnsw</code>" in page
               for page in pages)  # fmt: skip
    assert sorted(renders) == sorted(ANSWERS)  # three views, one rendering each


def test_each_language_shows_its_own_label_for_a_link_that_leaves_the_site(
    staff_client, transcript_url, renders
):
    english = staff_client.get(transcript_url).content.decode()
    chinese = staff_client.get(transcript_url, **CHINESE).content.decode()
    again = staff_client.get(transcript_url, **CHINESE).content.decode()

    assert 'title="example.org (opens another site)"' in english
    label = 'title="example.org (打开其他网站)"'
    assert label in chinese and label in again
    assert len(renders) == 2 * len(ANSWERS)


def test_a_transcript_is_shown_when_the_cache_is_down(staff_client, transcript_url):
    # Connections refused: a Redis restarting. The answers are rendered as before.
    with override_settings(
        CACHES={"default": redis_cache(f"redis://127.0.0.1:{_closed_port()}/0")}
    ):
        response = staff_client.get(transcript_url)

    assert response.status_code == 200
    assert "Use <strong>HNSW</strong>" in response.content.decode()
