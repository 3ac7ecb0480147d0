"""Who the article on screen is for, and what a reader needs to know before it.

"Who is this article for?" or "这篇文章适合谁看？" asks about the page: searched, it got the
greeting's list of articles (a catalogue question) or a passage of another article ("Who
should read this?" quoted the observability article). An article's record has no audience
field, so a librarian reads the page: a sentence of its own naming its readers or what they
should know first answers; without one, it says the article doesn't say, and what it covers
(its summary and each section's lead) lets the reader judge.
"""

from __future__ import annotations

import re

from agent.llm.offline_render import SOURCE, article_link, compose_summary
from agent.llm.offline_text import article_facts, inert

# A sentence in which an article names its readers or what it assumes of them.
_NAMES_READERS = re.compile(
    r"\b(this|the) (post|article|guide|piece|tutorial|series) (is )?(for|assumes|expects|"
    r"(written|meant|intended) for|aimed at)\b|\bif you('re| are) (new to|already|familiar)\b|"
    r"\b(written|meant|intended) for (readers|developers|engineers|anyone|beginners|you)\b|"
    r"\bfor readers who\b|\bassumes (you|the reader|some|familiarity|basic)\b|"
    r"\bno prior\b|\bprior (knowledge|experience)\b|\bprerequisites?\b|"
    r"适合.{0,12}(读者|开发者|工程师|新手|初学者|的人)|面向.{0,12}(读者|开发者|工程师)|写给|"
    r"本文假设|假设你已|前置知识|预备知识|(需要|要求)你?(先)?(了解|熟悉|掌握)",
    re.IGNORECASE,
)
SAYS = {"en": "“{title}” says who it is for:", "zh": "《{title}》是这样说它的读者的："}
UNSAID = {
    "en": "“{title}” doesn’t say who it is written for or what a reader should know first; "
    "what it covers lets you judge:",
    "zh": "《{title}》没有说明写给哪些读者，也没有列出需要先掌握的知识；从它讲的内容可以判断：",
}


def audience_answer(article: dict, lang: str) -> str:
    """The page's own sentence naming its readers, cited; else that it names none, then its
    summary and section leads."""
    title = inert(str(article.get("title", "")))
    body = str(article.get("body") or "")
    said = next((fact.text for fact in article_facts(body) if _NAMES_READERS.search(fact.text)), "")
    if said:
        source = f"{SOURCE[lang]}{article_link(article)}"
        return f"{SAYS[lang].format(title=title)}\n\n{inert(said)}\n\n{source}"
    return f"{UNSAID[lang].format(title=title)}\n\n{compose_summary(article, lang)}"
