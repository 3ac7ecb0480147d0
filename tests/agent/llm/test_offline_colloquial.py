"""Questions typed as Chinese developers talk, through the offline model and the real search."""

import pytest

from agent.answered import is_decline
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


@pytest.mark.django_db
def test_the_demo_blog_answers_spoken_chinese_and_declines_spoken_near_misses(demo_index):  # noqa: F811
    for question, article in (
        # 跟 for 和, 啥 for 什么: read as the unknown words "跟" and "啥区", both were declined.
        ("cancelled 跟 interrupted 有啥区别", "/articles/cancellation-and-timeouts-zh/"),
        ("hnsw 的 m 跟 ef_construction 调大了有啥代价", "/articles/pgvector-and-hnsw/"),
    ):
        answer, _ = _demo_answer(question, demo_index)
        assert not is_decline(answer) and article in answer, (question, answer)
    for off_topic in (
        "bge-m3 比 e5 好使不",  # another embedding model
        "celery 的重试咋配",  # another task queue
        "pgvector 装 mac 上老报错咋整",  # installing, on a system no article covers
        "pgvector 跟 猫",  # a lone character that names the topic: a cat
        "向量 跟 猪 肉",  # and pork
    ):
        answer, _ = _demo_answer(off_topic, demo_index)
        assert is_decline(answer), (off_topic, answer)
