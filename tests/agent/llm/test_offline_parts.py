import pytest

from agent.llm.offline_parts import announced_parts, question_parts
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Why is HNSW slow to build? How much memory does IVFFlat use?",
            ["Why is HNSW slow to build?", "How much memory does IVFFlat use?"],
        ),
        (
            "How is the turn cancelled when the reader presses stop and why is the sender "
            "queue bounded?",
            [
                "How is the turn cancelled when the reader presses stop",
                "why is the sender queue bounded?",
            ],
        ),
        (
            "单次模型调用的超时是多少秒？一轮对话最多能调用几次模型？",
            ["单次模型调用的超时是多少秒？", "一轮对话最多能调用几次模型？"],
        ),
        (
            "限流和步数上限分别防止了什么样的费用失控？",
            ["限流防止了什么样的费用失控？", "步数上限防止了什么样的费用失控？"],
        ),
        (
            "中文分词用哪个扩展，另外向量索引选哪种？",
            ["中文分词用哪个扩展", "另外向量索引选哪种？"],
        ),
        (  # what comes before the subjects frames both parts
            "在 Postgres 里，限流和步数上限分别防止什么？",
            ["在 Postgres 里，限流防止什么？", "在 Postgres 里，步数上限防止什么？"],
        ),
        (  # "they" after the part's own words points at those, not at the other part
            "What do HNSW's m and ef_construction control, and how are articles cut into "
            "chunks before they are embedded?",
            [
                "What do HNSW's m and ef_construction control",
                "how are articles cut into chunks before they are embedded?",
            ],
        ),
        (  # a tail asking for evidence rides with the rest, which still splits
            "Which index has the best recall? What is the token budget? Any numbers?",
            ["Which index has the best recall?", "What is the token budget?"],
        ),
        (  # a third part is searched and answered with the second, not dropped
            "Why is HNSW slow to build? How much memory does IVFFlat use? Which one needs "
            "training?",
            [
                "Why is HNSW slow to build?",
                "How much memory does IVFFlat use? Which one needs training?",
            ],
        ),
        # "It" names the system asked about, or a thing of its own part, as often as the
        # other part's subject: searched alone, these parts found their own articles.
        (
            "Which embedding model does Docent use, and what m / ef_construction values is its "
            "HNSW index built with?",
            [
                "Which embedding model does Docent use",
                "what m / ef_construction values is its HNSW index built with?",
            ],
        ),
        (
            "what k goes in the RRF formula, and do I need to put anything in front of the "
            "question before embedding it with e5?",
            [
                "what k goes in the RRF formula",
                "do I need to put anything in front of the question before embedding it with e5?",
            ],
        ),
        (
            "为什么要让智能体靠工具查资料？系统提示词里哪一条要求它先搜索？",
            ["为什么要让智能体靠工具查资料？", "系统提示词里哪一条要求它先搜索？"],
        ),
    ],
)
def test_a_question_asked_in_two_is_split_into_its_parts(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "How does HNSW work?",
        "What is RRF, and why?",  # the second part has no words of its own
        "Which is faster to build, HNSW or IVFFlat?",
        "How do retries and timeouts interact?",  # "and" between nouns: one question
        # The second part points back at the first: searched alone it would find anything.
        "What do cosine scores mean, and what range do those scores fall in?",
        "审计记录怎么存？这些记录保留多久？",
        "What do HNSW and IVFFlat trade, and how do they differ in recall?",
        "向量索引有哪几种？它们的召回率差多少？",
        # After the part's own words, but not opening a clause of its own: still the other's.
        "What are HNSW and IVFFlat, and how does pgvector build them?",
        "文本嵌入存进 PostgreSQL 以后，用什么索引来查最近邻？",
        "限流和步数上限分别？",  # nothing shared after 分别
        # A part asking for the other's evidence has no subject of its own.
        "GIN 索引的查询比 zhparser 慢多少？有没有实测数据",
        "调用次数涨到 20 次，token 会涨多少倍？有没有具体数字？",
        "How much faster is HNSW than a scan? Any benchmarks to back that up?",
        "GIN 索引比 zhparser 慢多少？有实测数据吗？",
        # Many conjunctions and no 分别: one lazy regex around 和 took 2.7 s on this.
        "和 " * 250,
        "a和" * 250,
    ],
)
def test_a_question_asked_in_one_is_not_split(question):
    assert question_parts(question) == []


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (  # the scene and the words announcing the parts go; each part is its own ask
            "I'm preparing a talk for my team. Two things I'd like to know: how does the agent "
            "loop decide it is done, and how do you pick a hard cap on steps?",
            ["how does the agent loop decide it is done", "how do you pick a hard cap on steps?"],
        ),
        (
            "我在搭一个问答机器人，想问两件事：查询前缀怎么加，以及 HNSW 索引的参数怎么调？",
            ["查询前缀怎么加", "以及 HNSW 索引的参数怎么调？"],
        ),
        (  # a frame in the announcement's own sentence names what both parts are about
            "About HNSW, I have two questions: what does m control, and what does ef_search do?",
            ["About HNSW, what does m control", "what does ef_search do?"],
        ),
    ],
)
def test_words_that_announce_the_parts_are_not_searched_with_them(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        # No colon: "two things" is what is asked about, not an announcement.
        "Which two things does the loop check before it stops, and why those two?",
        "I have two questions:",  # nothing after the announcement
    ],
)
def test_a_count_that_announces_nothing_is_left_in_the_question(question):
    assert announced_parts(question) == question


@pytest.mark.django_db
def test_a_question_whose_parts_are_announced_cites_each_parts_article(demo_index):  # noqa: F811
    # Searched with the scene and "Two questions for you:", the loop part put the loop article
    # under the bar and the answer cited the step-limits article alone.
    for question, articles in (
        (
            "I'm writing up notes for a workshop. Two questions for you: how does the agent "
            "loop decide it is finished, and how do you choose a hard cap on the number of steps?",
            ("/articles/anatomy-of-the-agent-loop/", "/articles/why-step-limits-matter/"),
        ),
        (
            "我们团队在做内部知识库，有两个问题：文本嵌入的前缀该怎么加？HNSW 的参数怎么调？",
            ("/articles/embeddings-primer-zh/", "/articles/pgvector-and-hnsw/"),
        ),
    ):
        answer, _ = _demo_answer(question, demo_index)
        assert all(article in answer for article in articles), (question, answer)
