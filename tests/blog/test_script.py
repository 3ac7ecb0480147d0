"""Traditional Chinese questions against the Simplified articles (blog/script.py)."""

import pytest

from blog.script import (
    is_traditional,
    question_fold,
    simplified_chars,
    to_simplified,
    to_traditional,
)
from blog.search import article_search
from tests.blog.test_search import VectorBook, titles, unit


@pytest.mark.parametrize(
    "text, traditional",
    [
        ("中文全文檢索為什麼比英文難？", True),
        # Mixed, as a reader whose input method switched midway writes: mostly Traditional.
        ("中文全文检索為什麼比英文難做？", True),
        ("中文全文检索为什么比英文难？", False),
        # 著 is Simplified as well as Traditional: one shared character makes no Taipei reader.
        ("这个著名的算法是什么？", False),
        ("日本語の検索設定", False),  # kana: Japanese, left as it is
        ("How does HNSW work?", False),
        ("", False),
    ],
)
def test_a_text_leans_traditional_when_more_of_it_changes_towards_simplified(text, traditional):
    assert is_traditional(text) is traditional


def test_a_traditional_question_is_folded_to_simplified_and_mainland_words():
    assert question_fold("非同步持久化怎麼做到不讓使用者等待資料庫？") == (
        "异步持久化怎么做到不让用户等待数据库？"
    )
    # Fullwidth letters and digits, as a keyboard in fullwidth mode types them, fold too.
    assert question_fold("ＨＮＳＷ 的 ｍ 預設值是多少？") == "HNSW 的 m 默认值是多少？"


def test_simplified_and_english_questions_are_left_as_they_are():
    # 程式 and 信息 read the same in both scripts: only a Traditional question is rewritten.
    for text in ["程式里的信息怎么记录？", "What does hnsw.ef_search control?"]:
        assert to_simplified(text) == question_fold(text) == text


def test_the_offline_decline_goes_to_traditional_and_back_unchanged():
    decline = "我在这个博客的文章里没有找到相关内容。"
    assert to_traditional(decline) == "我在這個博客的文章裡沒有找到相關內容。"
    assert simplified_chars(to_traditional(decline)) == decline


@pytest.mark.django_db
def test_a_traditional_question_matches_the_simplified_article_as_its_simplified_twin(
    make_article, add_chunk
):
    add_chunk(
        make_article(title="异步持久化", slug="async-zh"),
        "异步持久化：回答先送到用户面前，再在后台写入数据库，不让用户等待。",
        unit((0, 1.0)),
    )
    add_chunk(make_article(title="Bread", slug="bread"), "Baking bread at home.", unit((1, 1.0)))
    # The book knows only the Simplified text: the search embeds the question folded.
    book = VectorBook({"异步持久化怎么做到不让用户等待数据库？": unit((0, 0.9), (1, 0.44))})

    simplified = article_search(query="异步持久化怎么做到不让用户等待数据库？", embedder=book)
    traditional = article_search(query="非同步持久化怎麼做到不讓使用者等待資料庫？", embedder=book)

    assert titles(traditional) == titles(simplified) == ["异步持久化"]
    assert traditional[0].coverage == simplified[0].coverage > 0.5
    assert traditional[0].relevance == simplified[0].relevance


@pytest.mark.django_db
def test_a_traditional_question_no_article_answers_still_finds_nothing(make_article, add_chunk):
    add_chunk(
        make_article(title="异步持久化", slug="async-zh"),
        "异步持久化：回答先送到用户面前，再在后台写入数据库，不让用户等待。",
        unit((0, 1.0)),
    )
    book = VectorBook({"量子电脑的错误更正怎么做？": unit((0, 0.8), (2, 0.6))})

    assert article_search(query="量子電腦的錯誤更正怎麼做？", embedder=book) == []


def test_taiwan_and_hong_kong_words_become_the_mainland_words_the_articles_use():
    assert question_fold("串流輸出逾時了，使用者會看到什麼？") == "流式输出超时了，用户会看到什么？"
    assert question_fold("工具呼叫失敗的訊息") == "工具调用失败的消息"
    # Cantonese grammar words, as Hong Kong writes them, read as Mandarin's.
    assert question_fold("聊天機械人嘅每日權杖預算係幾多？") == "聊天机器人的每日令牌预算是多少？"
    # Words both sides write alike stay, 關係 included (OpenCC's Taiwan phrase table made
    # 向量 "矢量" and 查詢 "查找").
    assert question_fold("向量檢索的查詢和混合檢索有什麼關係？") == (
        "向量检索的查询和混合检索有什么关系？"
    )


def test_the_katakana_middle_dot_and_long_mark_do_not_make_a_question_japanese():
    # ・ and ー end the katakana block, and Chinese text uses them too.
    assert is_traditional("資料庫・索引怎麼設定？")
    assert not is_traditional("インデックスの設定は？")


def test_a_text_folded_again_is_read_from_the_cache():
    question_fold.cache_clear()
    for _ in range(3):
        question_fold("資料庫怎麼設定？")
    assert question_fold.cache_info().hits == 2
