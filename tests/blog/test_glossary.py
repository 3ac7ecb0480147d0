import math
from pathlib import Path

import pytest

from blog.glossary import ArticleText, Glossary, bridged_coverage, bridged_known, glossary
from blog.search import article_search
from tests.blog.test_search import VectorBook, unit

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(tmp_path: Path) -> Glossary:
    path = tmp_path / "glossary.txt"
    path.write_text(
        "# a comment\n"
        "spool file = 暂存文件\n"
        "retry = 重试\n"
        "table = 表|表格\n"  # "表" alone is too common a substring: dropped
        "rate limit = 限流\n",
        encoding="utf-8",
    )
    return Glossary(path)


def test_entries_are_stemmed_as_the_index_stems_them_and_one_character_terms_dropped(small):
    entries = {entry.english: entry for entry in small.entries()}

    assert entries[("spool", "file")].lexemes == {"spool", "file"}
    assert entries[("retry",)].lexemes == {"retri"}
    assert entries[("table",)].chinese == ("表格",)


def test_an_english_question_bridges_only_through_entries_all_of_whose_words_it_uses(small):
    bridges = small.bridges("Where is the spool file?", {"spool", "file"}, "en")
    assert [b.chinese for b in bridges] == [("暂存文件",)]
    # "rate" without "limit" is not the idea 限流 names.
    assert small.bridges("What rate?", {"rate"}, "en") == []


def test_a_chinese_question_bridges_to_english_words_in_any_common_inflection(small):
    (bridge,) = small.bridges("失败以后会重试几次？", {"失败", "以后", "重试", "几次"}, "zh")

    assert bridge.sources == {"重试"}
    assert bridge.holds(ArticleText("Each save is retried three times."))
    assert bridge.holds(ArticleText("Retries back off."))
    assert not bridge.holds(ArticleText("The retrieval step."))


def test_coverage_counts_a_term_whose_translation_the_article_holds(small):
    weights = {"spool": 2.0, "file": 1.0, "kubernet": 1.0}
    bridges = small.bridges("spool file kubernetes", set(weights), "en")

    holds = bridged_coverage(weights, set(), bridges, "三次都失败就写入暂存文件。")
    lacks = bridged_coverage(weights, set(), bridges, "三次都失败就放弃。")

    assert holds == pytest.approx(3.0 / 4.0)
    assert lacks == 0.0


def test_a_term_is_known_when_the_blog_uses_its_translation(small):
    bridges = small.bridges("spool file", {"spool", "file"}, "en")

    assert bridged_known(bridges, {"暂存": 3, "存文": 3, "文件": 9}) == {"spool", "file"}
    assert bridged_known(bridges, {"文件": 9}) == set()


def test_every_line_of_the_shipped_glossary_is_an_entry_with_both_sides():
    lines = [
        line
        for line in glossary._path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    entries = glossary.entries()

    assert len(entries) == len(lines)
    # Stop words alone ("out", "per") would bridge nothing: every entry has a stem to match.
    assert all(entry.lexemes and entry.chinese for entry in entries), [
        entry.english for entry in entries if not (entry.lexemes and entry.chinese)
    ]


@pytest.mark.parametrize(
    ("question", "lexeme", "english"),
    [
        ("工具结果要按什么顺序追加？", "追加", "Append the results in call order."),
        ("步数用完以后的兜底回答是什么？", "兜底", "The fallback is one last call."),
        ("重启以后记录会丢失吗？", "丢失", "Nothing is lost on a restart."),
        # "怎么防止提示词注入？" was under the bar (0.19) for the article on prompt injection.
        ("怎么防止提示词注入？", "注入", "Prompt injection is the attempt to smuggle rules."),
        ("第一道防线是什么？", "防线", "The system prompt is the first line of defence."),
    ],
)
def test_the_shipped_glossary_bridges_the_articles_own_key_words(question, lexeme, english):
    # Key words of the demo articles that had no line: a Chinese question using them shared
    # nothing with the English article that answers it.
    bridges = glossary.bridges(question, {lexeme}, "zh")

    assert any(bridge.holds(ArticleText(english)) for bridge in bridges)


def test_the_shipped_glossary_bridges_an_english_key_word_to_the_chinese_articles():
    (bridge,) = glossary.bridges("Which rows are skipped?", {"skip"}, "en")

    assert bridge.holds(ArticleText("冲突的记录会被跳过。"))


@pytest.mark.parametrize(
    ("question", "lexeme", "chinese"),
    [
        # "What happens when the user clicks stop?" was under the bar for the cancellation
        # article (relevance 0.48, "click" unknown to the blog): it writes 点击停止.
        ("What happens when the user clicks stop?", "click", "用户点击停止，前端发出一条消息。"),
        ("If I stop it, am I still charged?", "charg", "模型可能继续生成，token 照样计费。"),
        ("Is a cancelled answer billed?", "bill", "后台继续生成的部分照样计费。"),
    ],
)
def test_the_shipped_glossary_bridges_everyday_words_of_clicking_and_paying(
    question, lexeme, chinese
):
    (bridge,) = glossary.bridges(question, {lexeme}, "en")

    assert bridge.holds(ArticleText(chinese))


def _spool_blog(make_article, add_chunk):
    near = unit((0, 0.80), (1, math.sqrt(1 - 0.80**2)))
    for slug, title, text, vector in [
        ("spool-zh", "异步持久化", "三次都失败，就把记录追加到暂存文件，启动时重放。", near),
        ("other-zh", "看板", "延迟看板只看 p95。", unit((0, 0.78), (2, math.sqrt(1 - 0.78**2)))),
    ]:
        chunk = add_chunk(make_article(title=title, slug=slug), text, vector)
        chunk.language = "zh"
        chunk.save()
    add_chunk(make_article(title="Loops", slug="loops"), "Cap the agent's steps.", unit((3, 1.0)))


def test_an_english_question_finds_the_chinese_article_holding_its_terms_translated(
    make_article, add_chunk, settings
):
    _spool_blog(make_article, add_chunk)
    question = "Is a failed record replayed from the spool file?"
    book = VectorBook({question: unit((0, 1.0))})

    settings.SEARCH_GLOSSARY = False
    without = {h.url: h for h in article_search(query=question, embedder=book, min_relevance=0)}
    settings.SEARCH_GLOSSARY = True
    with_glossary = {h.url: h for h in article_search(query=question, embedder=book)}

    spool = "/articles/spool-zh/"
    assert without[spool].relevance < settings.SEARCH_MIN_RELEVANCE
    assert list(with_glossary) == [spool]
    assert with_glossary[spool].coverage > without[spool].coverage
    assert with_glossary[spool].known > without[spool].known


def test_an_english_question_the_chinese_articles_do_not_answer_still_finds_nothing(
    make_article, add_chunk
):
    _spool_blog(make_article, add_chunk)
    question = "Which Kubernetes operator deploys the spool to Aurora?"
    book = VectorBook({question: unit((0, 1.0))})

    assert article_search(query=question, embedder=book) == []


def test_a_translation_in_the_article_s_title_covers_the_question_s_term(
    make_article, add_chunk, settings
):
    """Titles and headings are indexed with the text, so a same-language question matches
    them; "限流" found "rate limit" in the article's text only, and its title is where it is."""
    settings.SEARCH_GLOSSARY = True
    english = add_chunk(
        make_article(title="Rate limits for public chatbots", slug="limits"),
        "Count each visitor's requests per minute and refuse the rest.",
        unit((0, 1.0)),
    )
    english.heading_path, english.language = "Two identities", "en"
    english.save()
    board = make_article(title="看板", slug="board-zh")
    chinese = add_chunk(board, "延迟看板只看 p95。", unit((2, 1.0)))
    chinese.language = "zh"
    chinese.save()
    question = "聊天机器人怎么做限流？"
    book = VectorBook({question: unit((0, 0.8), (1, 0.6))})

    hits = {h.url: h for h in article_search(query=question, embedder=book, min_relevance=0)}

    assert hits["/articles/limits/"].coverage > 0
