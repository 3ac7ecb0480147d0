"""A question asking which things a subject supports is answered only where the blog says so."""

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_support import supported_kind

STREAMING_ARTICLE = {
    "article_id": 4,
    "title": "Streaming tokens to the browser",
    "url": "/articles/streaming-tokens-to-the-browser/",
    "body": """Tokens reach the browser as they are generated.

## Proxies

| | Server-Sent Events | WebSockets |
|---|---|---|
| Proxies and CDNs | Usually fine, watch buffering | Need explicit upgrade support |

Docent uses a WebSocket because a conversation is long-lived and the browser keeps it open.
""",
}
TRIGRAM_ARTICLE = {
    "article_id": 12,
    "title": "中文全文检索的难点",
    "url": "/articles/chinese-full-text-search-zh/",
    "language": "zh",
    "body": """中文没有空格，分词是全文检索的第一道难关。

pg_trgm 扩展把文本拆成三个字符一组的片段，支持 LIKE 查询和相似度查询，配合 GIN 索引使用。
""",
}


def _answer(question: str, article: dict, lang: str = "en") -> str:
    return compose_answer(question=question, context="", sources=[article], excerpts={}, lang=lang)


def test_which_things_a_subject_supports_is_declined_when_no_sentence_says_it():
    # Without the check the answer quoted the proxies row ("Need explicit upgrade support")
    # and the WebSocket sentence: both name the browser or support, neither says which
    # browsers Docent supports.
    answer = _answer("Which browsers does Docent support?", STREAMING_ARTICLE)
    assert "don’t mention “supported browsers”" in answer
    assert "upgrade support" not in answer


def test_a_sentence_that_says_what_is_supported_answers_it_in_either_language():
    assert "相似度查询" in _answer("pg_trgm 支持哪些查询？", TRIGRAM_ARTICLE, lang="zh")
    # An English question on the Chinese article: the sentence holding 支持 is the one quoted.
    assert "相似度查询" in _answer("Which queries does pg_trgm support?", TRIGRAM_ARTICLE)


def test_only_a_question_asking_which_things_names_a_kind():
    assert supported_kind("Which languages besides English and Chinese does Docent support?") == (
        "languages"
    )
    assert supported_kind("What kinds of databases is Docent compatible with?") == "databases"
    assert supported_kind("Docent 支持哪些大模型？") == "大模型"
    assert supported_kind("Does Docent support cancelling a turn?") == ""
    assert supported_kind("What does Docent support?") == ""
    assert supported_kind("聊天界面要支持回答到一半点停止，用 SSE 好还是 WebSocket 好？") == ""
