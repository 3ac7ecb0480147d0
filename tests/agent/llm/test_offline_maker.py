"""A question asking who made a thing is answered only by a sentence about its maker."""

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_maker import asks_maker

PERSISTENCE_ARTICLE = {
    "article_id": 11,
    "title": "异步持久化：不让用户等待数据库",
    "url": "/articles/async-persistence-zh/",
    "language": "zh",
    "body": """Docent 的原则很简单：先让用户看到结果，再慢慢存。

## 暂存文件

Docent 把这条记录序列化为一行 JSON，追加到本地的暂存文件。
""",
}
AGENTS_ARTICLE = {
    "article_id": 1,
    "title": "What a tool-driven agent is",
    "url": "/articles/tool-driven-agents/",
    "body": """The application, not the model, executes the tools. The model only asks; our
code decides whether the request is valid and what to return.

Docent was built by the blog's author as the running example of these articles.
""",
}


def _answer(question: str, article: dict, lang: str) -> str:
    return compose_answer(question=question, context="", sources=[article], excerpts={}, lang=lang)


def test_who_made_a_thing_is_declined_when_no_sentence_names_its_maker():
    # Without the check both quoted "Docent 的原则很简单…", the sentence richest in "Docent".
    assert "“who made it”" in _answer("Who created Docent?", PERSISTENCE_ARTICLE, "en")
    assert "“谁开发了它”" in _answer("Docent 是谁开发的？", PERSISTENCE_ARTICLE, "zh")


def test_a_sentence_naming_the_maker_still_answers():
    assert "built by the blog's author" in _answer("Who built Docent?", AGENTS_ARTICLE, "en")


def test_who_does_something_else_is_no_question_about_a_maker():
    assert not asks_maker("Who actually executes a tool call, the model or my application?")
    assert not asks_maker("Who decides when the loop stops?")
    assert asks_maker("Who is the author of Docent?")
    assert asks_maker("这个项目的作者是谁？")
