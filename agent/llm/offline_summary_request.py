"""Whether a question asks for an article summed up, and what it is about.

"Summarize the article about step limits", "tl;dr", "is there a post on X?" and "有没有讲X的
文章" are answered with an article's summary (offline_render), not with quoted facts. The
asking words are no topic: they are removed before the search, and an article titled after
what is left goes first. "Summarize this" on an article page means that page.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import terms

_SUMMARY = re.compile(
    # Whole words: "gist" is inside "AppRegistryNotReady", which is no request for a summary.
    r"\b(summari[sz]\w*|summary|tl;?dr|sum (it )?up|overview|key points|main points|gist)\b|"
    r"总结|概括|摘要|概述|要点|讲了什么|说了什么|主要内容|"
    # "What does the blog say about X?", "is there an article on X?", "有没有讲X的文章": the
    # answer is that article, summed up, or that there is none.
    r"^\W*(what|anything) (do|does|did) (the|this|your) (blog|site|articles?|posts?) "
    r"(say|said|write|cover|have)\b|"
    r"^\W*does (the|this|your) (blog|site) (say|write|have|cover|mention) (anything|something)?|"
    r"^\W*(is there|are there|do you have|have you got|any) (an? |any )?(articles?|posts?|"
    r"write-?ups?) (on|about|covering|regarding|that covers?|explaining)\b|"
    r"^\W*(did|have) you (write|written) (anything |something )?(on|about)\b|"
    r"有没有(?=[^？?]{1,20}(文章|博文))|的?(文章|博文)吗|博客(里|中)?(是)?怎么(说|讲)",
    re.IGNORECASE,
)
_THIS_PAGE = re.compile(
    r"\bthis (article|post|page)\b|\bthis\b|\bit\b|这篇|本文|这个|这页|该文", re.IGNORECASE
)

# Asking for a summary names what to summarise with words no article uses of its topic:
# "summarize" alone is a word the demo blog never writes, so "summarize the article about step
# limits" scored relevance 0.05 and was declined; "step limits" scores 0.96.
_SUMMARY_WORDS = re.compile(r"\b\w*summar\w*|" + _SUMMARY.pattern, re.IGNORECASE)
_ARTICLE_WORDS = re.compile(
    r"\b(the|a|an|your|this|that|articles?|posts?|blog posts?|pieces?|write-?ups?|page|entry|"
    r"about|on|of|for|me|give|please|pls|can you|could you|quick|short|brief|blog|say|says|"
    r"anything|something|there|any|covering|regarding|explaining)\b|"
    r"关于|有关于|有关|相关|那篇|这篇|一篇|文章|博文|一下|给我|请|帮我|简单|的|有没有|讲|写|吗|博客|里",
    re.IGNORECASE,
)


def titled_first(topic: str, hits: list[dict]) -> list[dict]:
    """The hits, the first whose title names the topic first: "any posts about streaming?"
    means "Streaming tokens to the browser", though a Chinese article that mentions 流式 once
    ranked above it on the word alone."""
    wanted = terms(topic)
    named = [hit for hit in hits if wanted and wanted <= terms(str(hit.get("title", "")))]
    return [*named[:1], *(hit for hit in hits if hit not in named[:1])]


def summary_topic(question: str) -> str:
    """What a summary request is about, its asking words removed; the question itself when
    nothing is left ("summarize" alone goes by the page, or finds nothing)."""
    topic = " ".join(_ARTICLE_WORDS.sub(" ", _SUMMARY_WORDS.sub(" ", question)).split())
    topic = topic.strip(" ?？.。!！:：,，")
    return topic if terms(topic) else question


def _about_page(question: str) -> bool:
    """ "Summarize this" on an article page means that page, unless another topic is named."""
    rest = _SUMMARY.sub(" ", _THIS_PAGE.sub(" ", question))
    return bool(_THIS_PAGE.search(question)) or len(terms(rest)) <= 1
