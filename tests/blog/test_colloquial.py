"""Spoken Chinese read as the blog's written words (blog/colloquial.py)."""

import math

import pytest

from blog.colloquial import colloquial_fold, lone_character
from blog.relevance import Vocabulary, weighted_terms
from blog.script import question_fold
from blog.search import article_search
from tests.blog.test_search import VectorBook, titles, unit


@pytest.mark.parametrize(
    "asked, written",
    [
        ("为啥要切块", "为什么要切块"),
        ("有啥区别", "有什么区别"),
        ("会咋样", "会怎么样"),
        ("卡死了咋整", "卡死了怎么办"),
        ("前缀是干嘛的", "前缀是做什么的"),
        ("这么搞靠谱吗", "这么做可靠吗"),
        ("数据库挂了记录会丢吗", "数据库崩溃了记录会丢吗"),
        ("先存库再发", "先写库再发"),
        # A clause-final 不 or 嘛 asks as 吗 does; a tone particle says nothing.
        ("直接调 ORM 会报错不", "直接调 ORM 会报错吗"),
        ("能跑不？", "能跑吗？"),
        ("会丢数据呀", "会丢数据"),
        # 跟 between two nouns is the spoken 和, a word of its own.
        ("关键词分数跟余弦分数", "关键词分数 和 余弦分数"),
        ("m 跟 ef_construction", "m 和 ef_construction"),
    ],
)
def test_a_colloquial_word_is_read_as_the_written_one(asked, written):
    assert colloquial_fold(asked) == written


@pytest.mark.parametrize(
    "text",
    [
        "整轮对话跟着一起挂起",  # 挂起 (suspended) is no crash, 跟着 no conjunction
        "要不",  # 不 after 要 is a choice, not a question
        "行不行",
        "不丢也不重",
        "Why does nginx buffer SSE?",
    ],
)
def test_written_chinese_and_english_are_left_as_they_are(text):
    assert colloquial_fold(text) == text


def test_the_question_is_read_in_simplified_then_in_written_chinese():
    assert colloquial_fold(question_fold("寫庫失敗了會咋樣")) == "写库失败了会怎么样"


def test_a_lone_chinese_character_is_grammar_not_a_topic():
    assert lone_character("跟") and not lone_character("区别") and not lone_character("m")


def test_a_lone_character_outside_the_function_words_may_be_the_topic():
    # "pgvector 跟 猫" asks about a cat: with every lone character left out it cleared the bar.
    assert not lone_character("猫") and not lone_character("好")


def _vocab(frequency: dict[str, int], chunks: int = 100) -> Vocabulary:
    vocab = Vocabulary()
    vocab.frequency, vocab.chunks = frequency, chunks
    return vocab


def test_a_lone_character_the_blog_never_uses_is_not_an_unknown_word():
    vocab = _vocab({"cancel": 3, "interrupt": 2, "区别": 1})

    weights, known = weighted_terms(["cancel", "跟", "interrupt", "区别"], vocab)
    _, off_topic = weighted_terms(["cancel", "跟", "interrupt", "语音"], vocab)

    assert "跟" not in weights and known == 1.0
    assert off_topic < 1.0


@pytest.mark.django_db
def test_a_colloquial_question_clears_the_bar_and_an_off_topic_one_does_not(
    make_article, add_chunk
):
    article = make_article(title="取消与超时", slug="cancel-zh")
    chunk = add_chunk(article, "cancelled 与 interrupted 两种状态有什么区别。", unit((0, 1.0)))
    chunk.language = "zh"
    chunk.save()
    near = unit((0, 0.9), (1, math.sqrt(1 - 0.81)))  # cosine 0.9 to the article
    # The same vector as typed and as read, so only the words can tell the questions apart.
    book = VectorBook(
        {
            f"cancelled{joint}{name} 有{what}区别": near
            for name in ("interrupted", "kubernetes")
            for what in ("啥", "什么")
            for joint in (" 跟 ", " 和 ")
        }
    )

    assert titles(article_search(query="cancelled 跟 interrupted 有啥区别", embedder=book)) == [
        "取消与超时"
    ]
    assert article_search(query="cancelled 跟 kubernetes 有啥区别", embedder=book) == []
