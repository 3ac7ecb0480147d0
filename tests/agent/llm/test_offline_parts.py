import pytest

from agent.llm.offline_parts import question_parts


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
        # A part guessing at the other's answer names what the first asks for: one question.
        "When a user hits stop, how do I also kill the Postgres query that is still running "
        "for that turn? pg_cancel_backend or something like that?",
        "How do I stop the running query? Maybe pg_terminate_backend or something?",
        "用户点了停止，怎么把还在跑的 SQL 查询也停掉？pg_cancel_backend 之类的？",
        # Many conjunctions and no 分别: one lazy regex around 和 took 2.7 s on this.
        "和 " * 250,
        "a和" * 250,
    ],
)
def test_a_question_asked_in_one_is_not_split(question):
    assert question_parts(question) == []
