"""Greetings and "what can you do?": the offline model answers with the blog's newest articles.

Searching the knowledge base for "hi" finds nothing and the visitor's first impression is "I
couldn't find anything". A librarian greets back and says what the shelves hold. Only a whole
message that is a greeting or asks about the blog itself counts: "what's new in pgvector 0.8?"
is a question about pgvector, and is searched.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import inert, language, link_label, plain, terms
from agent.small_talk import GREETING, PLEASANTRY, is_small_talk

OVERVIEW_LIMIT = 5

_ABOUT_BLOG = (
    r"(what|which) (can|could|do) you (do|help( me)? with|answer|know( about)?|cover)"
    r"|(who|what) are you|how (can|do) (i|you) (use|ask|help)( (you|this|it))?|help( me)?"
    # The assistant's own name (agent.prompts): the articles use it for their running example.
    r"|(who|what)('s| is) docent|docent ?(是什么|是谁|是啥)|什么是 ?docent"
    r"|what('s| is)( this)? (blog|site) about|what (is|are) (on|in) (this|the) (blog|site)"
    r"|what('s| is) new( here| on (this|the) (blog|site))?|what topics( do you cover)?"
    r"|(list|show)( me)?( all| the)? (articles|posts)|(latest|newest|recent) (articles|posts)"
    r"|你(能|会|可以)(做|干|回答)(什么|些什么|哪些)|你是谁|怎么用|帮助"
    r"|(这个)?(博客|网站)(讲|写|是|有)(些)?(什么|哪些)(内容|文章)?|有哪些文章|最新(的)?文章|有什么新(文章|内容)?"
    # "summarize this blog in one sentence" was read as a summary of an article about "in one
    # sentence", and summed up a random one.
    r"|(summari[sz]e|sum up|describe|give me an overview of|(an )?overview of|tl;?dr( of)?)"
    r"( for me)? (this|the|your) (blog|site|website)( for me)?"
    r"( in (one|a|two|three|a few) (sentences?|lines?|words|paragraphs?))?( for me)?"
    r"|(总结|概括|介绍)(一下)?(这个|你们的?)?(博客|网站)"
)
_WHOLE = re.compile(
    rf"\s*(({GREETING})[\s,，!！.。]*)?(({_ABOUT_BLOG}))?\s*[?？!！.。~]*\s*", re.IGNORECASE
)
# Such a message is short. The limit also bounds _WHOLE's work: three of its runs take spaces,
# so "hi", 3,980 tabs and a question tried every way of sharing the tabs among them, minutes of
# CPU for one message, with the web process answering nobody meanwhile (a regex holds the GIL).
MAX_OVERVIEW_CHARS = 120

INTRO = {
    "en": "Hello! I answer questions from this blog’s articles and cite the ones I quote. "
    "The newest articles:",
    "zh": "你好！我根据这个博客的文章回答问题，并注明引用的文章。最新的文章：",
}
# The greeting opening the overview's sentences, said only to a reader who greeted, once a
# conversation: "hi" then "what can you do?" opened both answers "Hello!", and "what can you
# do?" alone was greeted as if the reader had said hello.
HELLO = {"en": "Hello! ", "zh": "你好！"}
INTRO_UNGREETED = {lang: INTRO[lang].removeprefix(HELLO[lang]) for lang in INTRO}
_GREETS = re.compile(rf"\s*({GREETING})\b", re.IGNORECASE)
OUTRO = {
    "en": "Ask me about any of them, in English or Chinese.",
    "zh": "可以用中文或英文问我其中任何一篇的内容。",
}
# The list could not be read (the tool failed): greet without claiming what the blog holds.
UNLISTED = {
    "en": "Hello! I answer questions from this blog’s articles and cite the ones I quote. "
    "Ask me about anything they cover, in English or Chinese.",
    "zh": "你好！我根据这个博客的文章回答问题，并注明引用的文章。可以用中文或英文问我。",
}
EMPTY = {
    "en": "Hello! I answer questions from this blog’s articles, but none is published yet.",
    "zh": "你好！我根据这个博客的文章回答问题，但目前还没有发表的文章。",
}


_HOW_MANY = re.compile(
    r"\bhow many (articles|posts|blog posts|pieces|entries|write-?ups)\b"
    r"|(多少|几)篇|多少(文章|博文)",
    re.IGNORECASE,
)
# The greeting's place, when the reader asked how many articles there are.
COUNT = {
    "en": "The blog has {n} published articles. I answer questions from them and cite the ones "
    "I quote. The newest:",
    "zh": "博客共发表了 {n} 篇文章，我根据它们回答问题，并注明引用的文章。最新的几篇：",
}
COUNT_AT_LEAST = {
    "en": "The blog has at least {n} published articles. I answer questions from them and cite "
    "the ones I quote. The newest:",
    "zh": "博客至少发表了 {n} 篇文章，我根据它们回答问题，并注明引用的文章。最新的几篇：",
}


# A whole message of thanks, an "ok" or a goodbye (agent.small_talk.closing) ends the
# exchange; searching the blog for "thanks!" answered "I couldn't find anything about that" to a
# reader being polite, and "ok" quoted a table row.
WELCOME = {
    "en": "You’re welcome! Ask me anything else the blog’s articles cover.",
    "zh": "不客气！还有其他问题，随时问我这个博客的文章里写到的内容。",
}
CLOSING_REPLIES = {
    "thanks": WELCOME,
    "acknowledged": {
        "en": "All right. Ask me anything else the blog’s articles cover.",
        "zh": "好的。还有其他问题，随时问我这个博客的文章里写到的内容。",
    },
    "goodbye": {
        "en": "Goodbye! Come back with any question the blog’s articles cover.",
        "zh": "再见！有问题随时回来问我这个博客的文章里写到的内容。",
    },
}


# A question about the blog's shelves, phrased any way ("what articles do you have", "which
# posts are here?", "你们都写了哪些文章"): a catalogue word, and nothing else a search could use.
# "any articles on pgvector?" names a topic ("pgvector") and is searched.
_CATALOGUE = re.compile(
    r"\b(articles?|posts?|topics?|subjects?|blog|site|write-?ups?|pieces?|entries)\b"
    r"|文章|博客|网站|主题|话题|博文",
    re.IGNORECASE,
)
_CATALOGUE_WORDS = frozenset(
    "articles article posts post topics topic subjects subject blog blogs site write writeup "
    "writeups wrote written writing pieces piece entries entry list show give tell see find "
    "read available kind kinds sort sorts type types got get have has already published "
    "publish cover covers covered offer offers else other more new latest recent newest "
    "everything anything please pls here currently far so".split()
)
_CATALOGUE_ZH = re.compile(
    r"文章|博客|网站|主题|话题|博文|你们|你|我|这里|这儿|这个|都|有|哪些|什么|啥|写|讲|了|过|的|"
    r"吗|呢|一下|列出|列|看看|看|给|所有|全部|最新|最近|新|关于|些|里|是|可以|能|请|目前|现在|一共|多少|篇"
)
_LATIN = re.compile(r"[a-z0-9]+")
# "how do I publish a post?" and "what is a blog?" ask about a thing, not the shelves.
_NOT_CATALOGUE = re.compile(
    r"\b(how(?! many)|why|when|where)\b|\bwhat('s| is) an?\b|怎么|如何|为什么|为啥", re.IGNORECASE
)


def wants_overview(question: str) -> bool:
    """True when the whole message is a greeting, or asks what the assistant or blog offers."""
    if not question.strip() or len(question) > MAX_OVERVIEW_CHARS:
        return False
    return _WHOLE.fullmatch(question) is not None or _asks_catalogue(question)


def _asks_catalogue(question: str) -> bool:
    """A catalogue word and no word of a topic: every other word is a function word, a
    catalogue verb ("have", "cover", "list") or, in Chinese, a phrase of asking."""
    if not _CATALOGUE.search(question) or len(question) > 120 or _NOT_CATALOGUE.search(question):
        return False
    rest = _CATALOGUE_ZH.sub(" ", question.lower())
    if language(rest) == "zh":
        return False  # a Chinese character left over is a topic ("限流")
    words = set(_LATIN.findall(rest)) - _CATALOGUE_WORDS
    return not any(terms(word) for word in words)


def asks_how_many(question: str) -> bool:
    """ "How many articles are there?", "有多少篇文章": the overview, with the count."""
    return _HOW_MANY.search(question) is not None


def greets_back(question: str, answers: str) -> bool:
    """Whether the overview says hello: the reader greeted, and no earlier answer did."""
    said = any(f"{hello.strip()}" in answers for hello in HELLO.values())
    return _GREETS.match(question) is not None and not said


def compose_overview(
    articles: object, lang: str, *, requested: int = 0, count: bool = False, greet: bool = True
) -> str:
    """The overview (_overview_text), its "Hello!" left off unless `greet`."""
    text = _overview_text(articles, lang, requested=requested, count=count)
    return text if greet else text.removeprefix(HELLO[lang])


def _overview_text(articles: object, lang: str, *, requested: int, count: bool) -> str:
    """A greeting, then the newest articles, each linked with its summary.

    Articles in the reader's language come first, newest first; then the others. `articles`
    is the list tool's output: anything but a list is its error. With `count`, the greeting
    says how many are published: exactly when fewer than `requested` came back, else "at
    least" that many (the list tool returns 20 at most).
    """
    if not isinstance(articles, list):
        return UNLISTED[lang]
    listed = [a for a in articles if isinstance(a, dict) and a.get("url")]
    total = len(listed)
    listed.sort(key=lambda a: language(str(a.get("title", ""))) != lang)
    listed = listed[:OVERVIEW_LIMIT]
    if not listed:
        return EMPTY[lang]
    intro = INTRO[lang]
    if count:
        intro = (COUNT_AT_LEAST if total >= requested else COUNT)[lang].format(n=total)
    lines = [_line(article) for article in listed]
    return f"{intro}\n\n" + "\n".join(lines) + f"\n\n{OUTRO[lang]}"


def _line(article: dict) -> str:
    link = f"[{link_label(str(article.get('title', '')))}]({article['url']})"
    # The summary is text on the blog's pages: quoted the same way (a summary's Markdown link
    # was a live link to another site here, and nowhere else).
    summary = inert(plain(str(article.get("summary") or "")))
    return f"- {link}: {summary}" if summary else f"- {link}"


# What a reader says before the question itself: "thanks! and what is HNSW?", "ok next
# question: how does the step limit work?", "好的，另外问一下：…". Searched with the question,
# "thanks" and "next question" were words of a topic ("what is RRF? thanks! and what is
# HNSW?" was declined), and two words of its own made the question look like a follow-up.
_PREAMBLE = re.compile(
    # Small talk's greetings, acknowledgements and thanks, and a few words of listening.
    rf"^\s*(?:(?:{PLEASANTRY}|i see|alright|all right|interesting|hmm+|ah|oh"
    r"|好的|好|明白了|懂了|了解|收到|嗯|哦)"
    # Punctuation after it, or a word that goes on ("ok next question"); not "hello world".
    r"(?:\s*[,，.。!！~]+\s*|\s+(?=(?:and|also|next|another|one more)\b)))+"
    r"(?:(?:and|also)\s+)?"
    r"(?:(?:(?:my )?(?:next|another|new|one more|a follow-?up|quick|second) question"
    r"|下一个问题|还有一个问题|再问一下|另外问一下|另外|再问一个)[\s:：,，.。]*)?"
    r"|^\s*(?:(?:my )?(?:next|another|new|one more|quick) question"
    r"|下一个问题|还有一个问题|再问一个)[\s:：,，.。]+",
    re.IGNORECASE,
)


def without_preamble(message: str) -> str:
    """The question after any thanks, greeting or "next question:" before it; the whole
    message when nothing follows (a message that only thanks is answered as thanks)."""
    if is_small_talk(message):
        return message
    match = _PREAMBLE.match(message)
    rest = message[match.end() :].strip() if match else message
    rest = _MAY_I_ASK.sub("", rest, count=1).strip()
    return rest or message


# "请问" ("may I ask") opens a Chinese question as "please" does an English one.
_MAY_I_ASK = re.compile(r"^(?:我想问一下|我想问|想问一下|想问|问一下|请问)[\s,，:：]*")


# "explain that more simply", "I don't understand", "没看懂": the reader asks for the last answer
# in other words, which an extractive librarian cannot give. Searched as a question it was
# declined as if the blog had nothing; the honest reply says what it can do and where the
# passage came from.
_REPHRASE = re.compile(
    r"\s*(?:sorry[,.!\s]*|hmm+[,.!\s]*)?(?:"
    r"i (?:still )?(?:don'?t|do not|didn'?t) (?:understand|get it|follow)(?: (?:that|it|this))?"
    r"|what do you mean|what does (?:that|this) mean"
    r"|(?:can|could|would) you (?:please )?(?:explain|say|put|phrase) (?:that|it|this) "
    r"(?:again|more simply|simpler|in simpler (?:terms|words)|differently|another way"
    r"|in plain english)"
    r"|(?:please )?(?:explain|say) (?:that|it|this) (?:again|more simply|simpler)"
    r"|(?:can|could) you (?:please )?(?:elaborate|simplify)|(?:please )?(?:elaborate|simplify)"
    r"|simpler(?: please)?|eli5|huh"
    r"|没看懂|看不懂|不太懂|没太懂|不懂|听不懂|什么意思|啥意思|这是什么意思"
    r"|(?:能不能|可以|能|请)?(?:说|讲|解释)得?(?:再)?(?:简单|通俗|明白|清楚)一?(?:点|些)"
    r"|再(?:解释|说|讲)一(?:下|遍)"
    r")[\s,，.。!！?？~]*(?:please|吗|呢|吧)?[\s.。!！?？]*",
    re.IGNORECASE,
)
REPHRASE = {
    "en": "I can only quote this blog’s articles, not put them in other words. {source}"
    "Ask me about one part of it, and I’ll look for the passage that answers that.",
    "zh": "我只能引用这个博客的文章原文，没法换一种说法。{source}"
    "可以就其中某一点再问我，我去找回答那一点的段落。",
}
REPHRASE_SOURCE = {
    "en": "The passage came from {links}; its own words around it may help. ",
    "zh": "那段内容出自{links}，读读上下文也许会更清楚。",
}
# The same request as a conversation's first message, off an article page: nothing to explain.
NOTHING_BEFORE = {
    "en": "There’s no earlier answer here to explain. Ask me about anything this blog’s articles "
    "cover, and I’ll quote the passage that answers it.",
    "zh": "这里还没有可以解释的回答。"
    "可以问我这个博客的文章里写到的任何内容，我会引用回答它的段落。",
}
_SOURCE_LINE = re.compile(r"^(?:Source: |来源：)(.+)$", re.MULTILINE)


def wants_rephrase(question: str) -> bool:
    """True when the whole message asks for the last answer again in other words."""
    return len(question) <= 80 and _REPHRASE.fullmatch(question) is not None


def compose_rephrase(previous_answer: str, lang: str) -> str:
    """The honest reply to "explain that more simply", naming the previous answer's sources."""
    found = _SOURCE_LINE.findall(previous_answer)
    source = REPHRASE_SOURCE[lang].format(links=found[-1].strip()) if found else ""
    return REPHRASE[lang].format(source=source)
