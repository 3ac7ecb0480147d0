"""A reader asking for the fix gets what to do, not only the problem it fixes."""

import pytest

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_remedy import asks_fix, remedied, tells_what_to_do
from agent.llm.offline_text import Fact, terms

STREAMING = {
    "article_id": 4,
    "title": "Streaming tokens to the browser",
    "url": "/articles/streaming-tokens-to-the-browser/",
    "language": "en",
    "body": """Streaming is mostly plumbing.

## The proxy that buffers everything

The most common streaming bug is a reverse proxy collecting the whole response.

nginx buffers proxied responses by default. You can switch it off per location with
`proxy_buffering off;`, or per response by sending the header `X-Accel-Buffering: no` from your
application. The header approach is handy because only streaming endpoints opt out.

## A quick test

If they all arrive together after ten seconds, something in the path is buffering, and the
`X-Accel-Buffering` header is the first suspect.
""",
}
LIMITS = {
    "article_id": 9,
    "title": "Rate limits and token budgets",
    "url": "/articles/rate-limits-and-token-budgets/",
    "language": "en",
    "body": """Limits keep a public chat cheap.

## Choosing a window algorithm

Counting per calendar minute is simple. The flaw is the boundary burst: ten requests at the end of
one minute and ten at the start of the next.

**Sliding window counter.** A cheap approximation: keep the current and previous fixed-window
counts, and weight the previous one by how much of it still overlaps.
""",
}
CANCEL = {
    "article_id": 14,
    "title": "取消与超时",
    "url": "/articles/cancellation-and-timeouts-zh/",
    "language": "zh",
    "body": """一个无法被打断的智能体浪费钱。

## 关闭模型的流式连接

取消任务之后，还要确认与模型服务商之间的 HTTP 流真的关闭了。
用 `async with` 打开流式响应时，任务被取消会退出上下文，连接随之关闭。
反过来，如果把流对象保存在别处、没有随任务一起关闭，模型可能在后台继续生成到结束，token 照样计费。
""",
}


def _answer(question: str, article: dict, context: str = "", excerpt: str = "") -> str:
    lang = "zh" if article["language"] == "zh" else "en"
    excerpts = {article["article_id"]: excerpt} if excerpt else {}
    return compose_answer(
        question=question, context=context, sources=[article], excerpts=excerpts, lang=lang
    )


@pytest.mark.parametrize(
    "question",
    [
        "How do I stop nginx from holding back my stream?",
        "How can I avoid the boundary burst?",
        "so what should I use instead?",
        "how do I fix that?",
        "How to disable buffering for one endpoint",
        "nginx sse buffering",
        "怎么解决？",
        "模型还在后台生成，怎么避免？",
        "那应该怎么加？",
    ],
)
def test_a_question_asking_what_to_do_is_read_so(question):
    assert asks_fix(question)


@pytest.mark.parametrize(
    "question",
    [
        "What does nginx do to streamed responses by default?",
        "Why do agents need step limits?",
        "How does HNSW work?",
        "What is the boundary burst?",
        "cancelled 和 interrupted 有什么区别？",
        "嵌入",
    ],
)
def test_other_questions_do_not_ask_what_to_do(question):
    assert not asks_fix(question)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("You can switch it off per location with proxy_buffering off;.", True),
        ("A cheap approximation: keep the current and previous counts.", True),
        ("Wrap sends in a timeout and treat expiry as a disconnect.", True),
        ("用 async with 打开流式响应时，连接随之关闭。", True),
        ("因此服务端应当定期发送心跳。", True),
        ("nginx buffers proxied responses by default.", False),
        ("用户关掉了页面，服务端却还在生成 token。", False),
        ("The flaw is the boundary burst: Redis keeps one counter.", False),
    ],
)
def test_a_sentence_saying_what_to_do_is_told_by_its_grammar(text, says):
    assert tells_what_to_do(Fact(text, "sentence", "", 0)) is says


def test_the_fix_next_to_the_problem_comes_along():
    answer = _answer("How do I stop nginx from holding back my stream until it ends?", STREAMING)
    assert "nginx buffers proxied responses by default." in answer
    assert "proxy_buffering off;" in answer


def test_the_same_question_not_asking_for_the_fix_keeps_its_pick():
    answer = _answer("Does nginx hold back proxied responses by default?", STREAMING)
    assert "nginx buffers proxied responses by default." in answer
    assert "proxy_buffering off;" not in answer


def test_keywords_alone_get_the_fix_over_a_mention_sharing_as_much():
    # The search's passage is the mention (a head start among equals), as on the demo blog.
    suspect = (
        "If they all arrive together after ten seconds, something in the path is buffering, "
        "and the `X-Accel-Buffering` header is the first suspect."
    )
    answer = _answer("X-Accel-Buffering header", STREAMING, excerpt=suspect)
    assert "X-Accel-Buffering: no" in answer
    assert "first suspect" not in answer


def test_a_follow_up_asking_the_fix_reads_the_problem_and_answers_it():
    answer = _answer(
        "how do I fix that?", STREAMING, context="What does nginx do to proxied responses?"
    )
    assert "proxy_buffering off;" in answer


def test_what_to_use_instead_names_the_thing_by_its_label():
    answer = _answer("How can I avoid the boundary burst of a fixed window?", LIMITS)
    assert "Sliding window counter." in answer
    assert "keep the current and previous" in answer


def test_a_chinese_ask_for_the_fix_gets_the_sentence_before_the_problem():
    answer = _answer("模型还在后台生成并计费，怎么避免？", CANCEL)
    assert "async with" in answer
    assert "token 照样计费" in answer


def test_a_table_row_is_no_fix_though_its_column_reads_as_a_verb():
    assert not tells_what_to_do(Fact("Limit: Burst — Key: session", "row", "", 0))


def test_a_fix_beside_a_weak_pick_does_not_come_along():
    facts = [
        Fact("nginx buffers proxied responses by default.", "sentence", "Proxy", 1, 1),
        Fact("You can switch it off per location.", "sentence", "Proxy", 2, 1),
        Fact("Awaiting send() gives you natural backpressure.", "sentence", "Backpressure", 9, 5),
        Fact("Wrap sends in a timeout.", "sentence", "Backpressure", 10, 5),
    ]
    pool = [(0, fact) for fact in facts]
    wanted = {term: 1.0 for term in terms("nginx buffers proxied responses")}
    wanted |= {term: 0.1 for term in terms("awaiting natural") if term not in wanted}
    picked = remedied(
        question="How do I stop nginx buffering?",
        pool=pool,
        picked=[pool[0], pool[2]],
        wanted=wanted,
    )
    texts = [fact.text for _, fact in picked]
    assert "You can switch it off per location." in texts
    assert "Wrap sends in a timeout." not in texts


def test_a_short_opening_sentence_is_no_label():
    article = {
        **LIMITS,
        "body": LIMITS["body"]
        + """
## Filtering

Filtering deserves a warning. A selective filter can leave you with far fewer rows than
asked for; raise the candidate count to get them back.
""",
    }
    answer = _answer("How do I fix a selective filter that leaves me with fewer rows?", article)
    assert "raise the candidate count" in answer
    assert "Filtering deserves a warning." not in answer
