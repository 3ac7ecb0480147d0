"""Spoken Chinese read as the written words the blog uses.

Developers type questions the way they talk: "为啥", "咋整", "靠谱吗", "会报错不". The blog is
written in standard written Chinese, so a colloquial word is a term no article holds, and the
relevance bar read it as a sign that the question is off-topic (an unknown bigram weighs as
much as the rarest word of the blog against the question's coverage). Each entry here is a
general word of everyday Mandarin and its written equivalent, not a phrase of any question;
question words become 什么/怎么, whose bigrams the search already leaves out as framing.

The search reads its terms through `colloquial_fold` (full text and the relevance evidence);
the question is embedded as typed: embedded rewritten, "Redis 挂了" as "Redis 崩溃了" moved an
out-of-scope question's vector toward the Channels article and over the bar.
"""

from __future__ import annotations

import re

# Longer words first: "咋整" is 怎么办 before 咋 alone is 怎么.
COLLOQUIAL = {
    "咋整": "怎么办",
    "咋办": "怎么办",
    "咋": "怎么",
    "啥": "什么",
    "干嘛": "做什么",
    "咱们": "我们",
    "咱": "我们",
    "靠谱": "可靠",
    "好使": "好用",
    "存库": "写库",
    "入库": "写库",
    "挂了": "崩溃了",
    "挂掉": "崩溃",
    "搞": "做",
    "弄": "做",
}
_WORDS = re.compile("|".join(sorted(COLLOQUIAL, key=len, reverse=True)))
_CLAUSE_END = r"(?=$|[\s?？。，,!！~])"
# A clause-final 不 or 嘛 asks, as 吗 does ("会报错不", "能跑不"); not after a word that makes
# 不 a reply or a choice ("要不", "可不").
_ASKING = re.compile(r"(?<=[\u4e00-\u9fff])(?<![要可也并还都就])[不嘛]" + _CLAUSE_END)
# 跟 joining two nouns is the spoken 和 ("分数跟余弦分数"): set off as a word of its own, so
# the bigrams it forms with its neighbours ("数跟", "跟余") are not read as words; not in the
# words it begins (跟着, 跟踪, 跟随, 跟进, 跟上, 跟前).
_WITH = re.compile(r"(?<!\s)\s*跟(?![着踪随进上前])\s*")  # (?<!\s): one start per run of spaces
# Sentence-final particles that carry tone, never content.
_PARTICLES = re.compile(r"[呀哈啦呗咯嘞喽]" + _CLAUSE_END)


def colloquial_fold(text: str) -> str:
    """`text` with its colloquial words as written Chinese; text without Chinese unchanged."""
    if text.isascii():
        return text
    text = _WORDS.sub(lambda match: COLLOQUIAL[match.group()], text)
    text = _WITH.sub(" 和 ", text)
    text = _ASKING.sub("吗", text)
    return _PARTICLES.sub("", text)


# The characters that stand alone as grammar: prepositions and conjunctions, particles,
# pronouns, modal and light verbs ("用 Redis", "装 pgvector", "写 SQL"). A closed list: a lone
# character outside it may be the topic ("pgvector 跟 猫" asks about a cat, and left out, it
# let that question clear the bar at 0.96).
FUNCTION_CHARACTERS = frozenset(
    "跟和与及或比在用把被给对从到向往于为让当按以由经据靠凭除替同是的地得了着过也都就还又很太更最"
    "吗呢吧啊嘛么个这那哪有没不能会要想该可装跑写做加换"
)


def lone_character(lexeme: str) -> bool:
    """A Chinese function character standing alone between other words ("A 跟 B", "在 X 上").

    Chinese names its topics with words of two characters or more; one character set off by
    English terms or spaces is mostly a preposition, a conjunction or a light verb (跟, 比, 在,
    用, 装). The index holds Chinese as bigrams, so such a character is unknown to the blog
    however common it is, and counted against the question it said nothing about the topic.
    """
    return lexeme in FUNCTION_CHARACTERS
