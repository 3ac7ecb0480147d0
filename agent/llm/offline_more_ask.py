"""Reading a follow-up made only of an ask about the answer before it, in either language.

"tell me more", "why?", "can you give an example?", "show me the code for that", "in short?",
"where does it say that?", "what are the other ways it can end?", "还有呢？", "为什么？",
"举个例子", "代码怎么写？", "一句话总结一下", "出处在哪？": the whole message is the ask, and it
names nothing of its own ("and does it work with MongoDB?" names MongoDB and is searched).
"""

from __future__ import annotations

import re

MAX_ASK = 60  # characters: a longer message says more than an ask about the answer

# What may open and close the ask: "ok, why?", "那为什么呢？", "more please".
_OPEN = r"\s*(?:and|so|ok|okay|also|then|那|那么|好的?|嗯)?[\s,，]*(?:"
_END = r")[\s,，.。!！?？~]*(?:please|thanks|吗|呢|吧|啊)?[\s.。!！?？]*"
_LIST_NOUN = (
    r"(?:ones?|ways|options|kinds|types|steps|phases|parameters|fields|reasons|cases|endings|"
    r"conditions|statuses|settings|rules|methods)"
)
_KINDS = {
    "other": r"(?:what|how) about the (?:other|rest)(?: ones?)?|"
    # "the other ways it can end": a list noun and a pronoun's clause, nothing naming a new
    # subject ("and the other databases like MongoDB?" is searched).
    rf"(?:what are )?the (?:other|rest)(?: {_LIST_NOUN})?(?: of (?:them|it|those))?"
    r"(?: (?:it|they|that|this|you|we|i|one) \w+(?: \w+)?)?|"
    r"(?:any )?other (?:ones|options|ways|kinds|types)|"
    r"(?:其他|其它|别的|其余)的?(?:方案|方法|办法|几种|几个|选项|情况)?|"
    r"还有(?:别的|其他|其它)(?:方案|方法|办法|选项)?",
    "more": r"(?:(?:can you |could you |please )?tell me more(?: about (?:it|that|this))?|"
    r"more(?: details| detail| on that| please)?|go on|keep going|continue|what else|"
    r"anything else|and\??)|还有呢|还有吗|然后呢|继续|"
    r"(?:再)?(?:详细|具体|多)(?:说说|讲讲|说一点|讲一点|一点)|再多(?:讲|说)(?:一点|一些|点)|"
    r"展开(?:说说|讲讲)",
    # "why that number?", "why concurrently?": a pronoun or a manner, no subject of its own.
    "why": r"why(?: (?:is|was|does|do) (?:that|it|this)(?: so)?| not| so| both|"
    r" that (?:number|figure|value|one|choice|order|limit|default|way)|"
    r" \w+ly| use (?:it|that|this))?|how come|what(?:'s| is) the reason|"
    r"为什么(?:不行|不能|要这样|选这个|呢)?|为啥|原因是什么|原因呢",
    "example": r"(?:(?:can|could) you )?(?:give|show) (?:me )?an? example|"
    r"(?:an? |any |some |for )?examples?|"
    r"for instance|e\.g\.|like what|(?:能|可以)?举个例子|比如(?:说|呢)?|有例子|例子呢|给个例子",
    "code": r"(?:(?:can you |could you )?show me )?(?:the )?(?:code|sql|snippet)"
    r"(?: for (?:that|it|this))?|what does the code look like|"
    r"(?:给我看看|看看)?(?:代码|sql)(?:怎么写|呢)?|有(?:示例)?代码|示例代码|举个代码例子|代码例子",
    "shorter": r"in short|tl;?dr|shorter|briefly|in (?:a|one) sentence|sum (?:it|that) up|"
    r"the short version|一句话(?:总结|概括)(?:一下)?|简短(?:点|一点|些)?说?|长话短说|简而言之",
    # "give me the key numbers", "any figures?", "列出关键数字": the article's figures, which
    # no search finds (the words name no topic), and which a summary leaves out.
    "figures": r"(?:(?:can|could) you )?(?:give me|list|show me|what are|any)?\s?(?:all )?(?:the )?"
    r"(?:key |main |important |headline |most important )?(?:numbers|figures|stats|statistics)"
    r"(?: (?:in|from|of) (?:it|this|that|here|(?:this|the) (?:article|post|page)))?|"
    r"(?:列出|列一下|给我|说说|讲讲)?(?:文中|文章里|这篇)?的?(?:关键|主要|重要)?的?(?:数字|数据|数值)"
    r"(?:有哪些|是什么|是多少)?|(?:文中|文章里|这篇)?有哪些(?:关键|主要|重要)?的?(?:数字|数据|数值)",
    "where": r"where does it say (?:that|so)|where (?:is|was) that|"
    r"which section(?: is (?:that|it) in)?|where did (?:you|that) (?:get|come from)(?: that)?|"
    r"出处(?:在哪|是哪)?里?|(?:这|那)是(?:文章)?(?:哪一节|哪节|哪里)说的|在哪(?:一节|里)说的|原文在哪",
}
_ASKS = {kind: re.compile(_OPEN + body + _END, re.IGNORECASE) for kind, body in _KINDS.items()}


def answer_ask(question: str) -> str:
    """What a follow-up made only of an ask about the answer wants ("more", "other", "why",
    "example", "code", "shorter", "figures", "where"), or "" for any other message."""
    if len(question) > MAX_ASK:
        return ""
    return next((kind for kind, pattern in _ASKS.items() if pattern.fullmatch(question)), "")
