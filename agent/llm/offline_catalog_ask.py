"""What a question about the blog's catalogue asks: which articles, in what order, how many.

"Which articles are written in Chinese?", "标签是 postgres 的文章有哪些？", "What are the oldest
articles here?" ask about the collection, not a fact in an article. Searched, such a question
carries none of the blog's words and was declined, or matched an unrelated sentence. A
librarian answers it from the catalogue (offline_catalog).

Read by grammar in both languages: a word for the articles ("articles", "posts", 文章, 哪篇),
a facet (a language, a tag, a topic the tags name, newest or oldest, how many, a year, where
to start), and nothing else: "which articles explain how HNSW works?" names a topic of its
own and is searched as before. A question about one article named by its title or topic
("When was the step limits article published?") asks a field of its record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.llm.offline_pagemeta import ask_of_record
from agent.llm.offline_text import CJK_RUN, terms

# A catalogue question is short; the limit also bounds the patterns' work.
MAX_ASK_CHARS = 200
DEFAULT_SHOWN = 5  # "the oldest articles": as many as the overview shows

_NOUN = re.compile(
    r"\b(articles?|posts?|blog ?posts?|pieces?|entries|write-?ups?|essays?)\b|文章|博文|篇",
    re.IGNORECASE,
)
_PLURAL = re.compile(
    r"\b(articles|posts|pieces|entries|write-?ups|essays|everything|all)\b|哪些|哪几篇|几篇|"
    r"多少篇|所有|全部|有什么文章|列出|列一下",
    re.IGNORECASE,
)
_THIS = re.compile(r"\b(this|that) (article|post|page|piece|one)\b|^\s*(这篇|本文|此文|本篇)", re.I)
# More than one article: "which articles…", not "the article's sections".
_MANY = re.compile(
    r"\b(articles|posts|pieces|entries|write-?ups|essays)\b|哪些文章|哪几篇|几篇|多少篇|所有|全部",
    re.IGNORECASE,
)
# Languages by name: the blog's two and the ones readers commonly ask for instead.
_LANGUAGES = {
    "zh": r"chinese|mandarin|中文|汉语|简体|繁体",
    "en": r"english|英文|英语",
    "other": r"japanese|korean|french|german|spanish|russian|portuguese|italian|arabic|hindi|"
    r"vietnamese|日文|日语|韩文|韩语|法文|法语|德文|德语|西班牙语|俄文|俄语|葡萄牙语|意大利语|阿拉伯语",
}
_LANGUAGE = re.compile(
    r"\b(in|written in|language is)\s+(?P<a>[a-z]+)\b|\b(?P<b>[a-z]+)[- ]language\b|"
    r"\b(?P<c>[a-z]+) (articles|posts)\b|(?P<d>中文|汉语|简体|繁体|英文|英语|日文|日语|"
    r"韩文|韩语|法文|法语|德文|德语|西班牙语|俄文|俄语|葡萄牙语|意大利语|阿拉伯语)",
    re.IGNORECASE,
)
# A dot or hyphen only inside a name ("node.js"), so the sentence's full stop is not part of it.
# As long as a tag's name may be (60): unbounded, a 4,000-digit message cost 1.5 s of CPU per
# search here, every start of the run scanning to its end (red team 38).
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9.+#-]{0,58}[A-Za-z0-9+#])?"
_TAG = re.compile(
    rf"\btagged(?: as| with)?\s+[\"'“‘]?(?P<a>{_NAME})|\btags?\s+(?:of\s+)?[\"'“‘](?P<b>{_NAME})"
    rf"|\bthe\s+tag\s+[\"'“‘]?(?P<c>{_NAME})|\bthe\s+[\"'“‘]?(?P<d>{_NAME})[\"'”’]?\s+tag\b"
    rf"|\btag\s+[\"'“‘]?(?P<e>{_NAME})[\"'”’]?"
    rf"|标签(?:是|为|叫)?\s*[\"'“‘「]?(?P<f>{_NAME}|[\u4e00-\u9fff]{{2,6}}?)[\"'”’」]?(?=\s|的|下|$|[？?，,。])"
    rf"|(?P<g>{_NAME})\s*(?:这个)?标签",
    re.IGNORECASE,
)
_TOPIC = re.compile(
    r"\b(articles?|posts?|pieces?|everything|anything|something)\s+(you have\s+)?(about|on|"
    r"covering|regarding|related to|concerning)\s+(?P<a>[^?.!,，。？！]+)"
    r"|\b(articles?|posts?)\s+(that\s+|which\s+)?(cover|discuss|are about|is about)s?\s+"
    r"(?P<b>[^?.!,，。？！]+)|\b(are|is)\s+about\s+(?P<c>[^?.!,，。？！]+)"
    r"|(关于|讲|介绍|涉及)(?P<d>[^，。？！?]{1,12}?)(的|相关的)(文章|博文|内容)"
    r"|(?P<e>[^，。？！?\s]{1,12}?)(相关|方面)的(文章|博文)"
    r"|\b(the|all|your|any)\s+(?!(the|of|my|your|other|more|new|old|recent|latest|newest|oldest|"
    r"first|last)\b)(?P<f>[a-z][\w-]+)\s+(articles|posts)\b",
    re.IGNORECASE,
)
_ORDER = [
    (
        "chronological",
        r"\b(in (the )?order|chronological\w*|by (publication )?date|oldest to "
        r"newest|in what order)\b|按(发布|发表)?(时间|日期)|时间顺序|从早到晚|先后顺序",
    ),
    ("oldest", r"\b(oldest|earliest|first)\b|最早|最老|最旧|第一篇|最先"),
    ("newest", r"\b(newest|latest|most recent|recent(ly)?|last|new)\b|最新|最近|新发|从新到旧"),
]
_START = re.compile(
    r"\b(start|begin)( reading)? with\b|\bwhere (should i |do i |to )?(start|begin)\b|"
    r"\bread (it )?first\b|\b(beginners?|newcomers?|novices?|newbies?)\b|\bi'?m new\b|"
    r"\bnew to\b|\breading order\b|\b(what|which) order\b[^?]*\bread\b|\border (should|to) "
    r"(i )?read\b|从哪(一)?篇|先(读|看)哪|新手|初学者?|小白|阅读顺序|(读|看)的顺序|按什么顺序",
    re.IGNORECASE,
)
_READING_ORDER = re.compile(r"\border\b|顺序", re.IGNORECASE)
_HOW = re.compile(r"\b(how(?! many)|why|where)\b|怎么|如何|为什么|为啥", re.IGNORECASE)
_COUNT = re.compile(
    r"\bhow many\b|\bnumber of\b|多少篇|(?<!的)(?<!前)(?<!哪)几篇|多少(文章|博文)", re.IGNORECASE
)
_YEAR = re.compile(r"(?P<b>(19|20)\d\d)\s*年|\b(?P<a>(19|20)\d\d)\b")
_AUTHOR = re.compile(
    r"\b(written|wrote|authored|posted) by\b|\bwho (wrote|writes|authored)( the| this| that| "
    r"these| those| your| all( the)?)? (articles?|posts?|blog( posts?)?|pieces?)(?=\s*[?？.!]|\s*$|"
    r"\s+(about|on|here|for)\b)|\bby (the )?"
    r"(same )?(author|writer)\b|\b(author|writer)s? (of|is|are|name)\b|\bwho('s| is)( the)? "
    r"(author|writer)|谁写|作者是|作者叫|哪位作者|博主是谁|"
    r"(?<!你们)(?<!你)(?<!博客)(?<!这里)(?<!我们)写(了|过)(哪些|什么|几篇|多少篇)",
    re.IGNORECASE,
)
_READERS = re.compile(
    r"\bmost (read|popular|viewed|liked|commented|shared|visited)\b|\b(popular|trending|"
    r"viral)\b|\bmost (comments|views|likes|readers|visits)\b|\bhow many (views|readers|"
    r"comments|likes)\b|最受欢迎|最热门|热门|阅读量|浏览量|(评论|点赞|收藏|阅读)(最多|数)|最多人",
    re.IGNORECASE,
)
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6,
    "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip
_SHOWN = re.compile(
    r"\b(?P<a>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)\s+(\w+\s+)?"
    r"(articles|posts|pieces)\b|(?P<b>\d{1,2}|[一两二三四五六七八九十])篇",
    re.IGNORECASE,
)
_ALL = re.compile(r"\b(all|every|everything)\b|所有|全部|一共|总共", re.IGNORECASE)
_SINGLE = re.compile(
    r"\b(the|which|what)( (one|single))? (\w+ ){0,2}(article|post|piece)\b(?!s)|哪篇|哪一篇|第一篇",
    re.IGNORECASE,
)
# How readers frame any catalogue question; what is left after these and the facets names a
# topic of its own ("which articles explain HNSW?"), and the question is searched.
_FRAME_WORDS = frozenset(
    "article articles post posts blog blogs piece pieces entry entries writeup writeups essay "
    "essays site here there any all every everything anything something list show give tell "
    "see find read reading have has had got get which what who whose whom is are was were be "
    "been do does did can could would should will me you your yours my i we our us it its "
    "this that these those the a an of on in to for with by from about and or please pls "
    "written write wrote published publish come came out go went up online first start begin "
    "order language tag tagged tags labelled labeled under with as so far currently already "
    "available kind kinds sort type types many how number total one ones single new latest "
    "newest recent recently oldest earliest last most put posted released date by".split()
)
_FRAME_ZH = re.compile(
    r"文章|博文|博客|网站|这里|这儿|这个|你们|你|我|都|有|没有|哪些|哪几篇|哪篇|哪一篇|哪|什么|啥|写|讲|"
    r"了|过|的|吗|呢|吧|呀|啊|一下|列出|列|看看|看|给|所有|全部|里|是|可以|能|请|目前|现在|一共|"
    r"总共|多少|几|篇|发表|发布|发|用|以|按|顺序|时间|日期|从|到|早|晚|应该|开始|推荐|一个|个|些|"
    r"标签|带有|带|打了|打|下|关于|相关|方面|最|先|读|成|中|上|之|该|先后|共|下面|还|其他|别的",
)


@dataclass(frozen=True)
class CatalogueAsk:
    """A catalogue question: `what` is "list" or "count" (of the articles that match every
    facet), "record" (a field of one article named by `subject`), or "unrecorded" (`field`
    is "author" or "readers": the record holds neither)."""

    what: str
    language: str = ""  # "en", "zh", or a language the blog does not write in, by name
    tag: str = ""  # a tag as the reader named it, or a topic word a tag may name
    tag_named: bool = False  # "tagged X" (an unknown tag is declined), not "about X"
    order: str = ""  # "newest", "oldest", "chronological"
    shown: int = 0  # how many to show; 0 for every match
    year: str = ""
    start: str = ""  # where a beginner should start: "first" (which one) or "order" (all)
    field: str = ""  # of a record: "date", "sections", "gist", "tags"; or "author", "readers"
    subject: str = ""  # the words naming one article


def catalogue_ask(question: str) -> CatalogueAsk | None:
    """What the question asks of the catalogue, or None when it asks something else."""
    if len(question) > MAX_ASK_CHARS or not any(
        p.search(question) for p in (_NOUN, _START, _TAG, _TITLE, _TOPIC)
    ):
        return None
    if _THIS.search(question):
        return None  # "this article" is the page on screen (offline_pagemeta), none named
    unrecorded = "author" if _AUTHOR.search(question) else ""
    unrecorded = unrecorded or ("readers" if _READERS.search(question) else "")
    if unrecorded:
        return CatalogueAsk("unrecorded", field=unrecorded)
    # "When was the article on HNSW published?" asks one article's date, not for a list.
    record = None if _MANY.search(question) else _record(question)
    return record or _listed(question)


def _listed(question: str) -> CatalogueAsk | None:
    """A question about a set of articles: every facet it names, and nothing else."""
    if _HOW.search(question) and not _START.search(question):
        return None  # "how do I publish a post in Chinese?" asks how, not which
    spans: list[tuple[int, int]] = []
    language = _language(question, spans)
    tag, named = _tag(question, spans)
    order = next((o for o, p in _ORDER if _found(p, question, spans)), "")
    start = _found(_START.pattern, question, spans)
    count = _found(_COUNT.pattern, question, spans)
    year = _year(question, spans)
    if not (language or tag or order or start or count or year):
        return None
    order = "chronological" if start else order
    newest_oldest = order in ("newest", "oldest") and not _ALL.search(question)
    shown = _shown(question, spans) if newest_oldest else 0
    if not _nothing_else(question, spans):
        return None
    return CatalogueAsk(
        "count" if count else "list",
        language=language,
        tag=tag,
        tag_named=named,
        order=order,
        shown=shown,
        year=year,
        start=("order" if _READING_ORDER.search(question) else "first") if start else "",
    )


def _found(pattern: str, question: str, spans: list[tuple[int, int]]) -> bool:
    matches = list(re.finditer(pattern, question, re.IGNORECASE))
    spans.extend(m.span() for m in matches)
    return bool(matches)


def _language(question: str, spans: list[tuple[int, int]]) -> str:
    for match in _LANGUAGE.finditer(question):
        named = next(g for g in match.group("a", "b", "c", "d") if g)
        code = next((c for c, p in _LANGUAGES.items() if re.fullmatch(p, named, re.I)), "")
        if code:
            start = match.start(next(k for k in "abcd" if match.group(k)))
            spans.append((start, start + len(named)))
            return named.lower() if code == "other" else code
    return ""


def _tag(question: str, spans: list[tuple[int, int]]) -> tuple[str, bool]:
    """The tag the question names ("tagged postgres", "标签是 postgres"), else a topic word
    ("articles about search", "关于搜索的文章") a tag may name."""
    match = _TAG.search(question)
    if match and (word := next(g for g in match.group(*"abcdefg") if g)):
        if word.lower() not in _FRAME_WORDS:
            spans.append(match.span())
            return word, True
    for match in _TOPIC.finditer(question):
        topic = _one_word(next(g for g in match.group(*"abcdef") if g))
        if topic and not any(re.search(p, topic, re.I) for p in _LANGUAGES.values()):
            spans.append(match.span())
            return topic, False
    return "", False


def _one_word(raw: str) -> str:
    """The topic when it is one word (or one Chinese term), frame words aside."""
    if CJK_RUN.fullmatch(raw.strip()):
        return raw.strip()
    words = [w for w in re.findall(r"[\w.+#-]+", raw.lower()) if w not in _FRAME_WORDS]
    return words[0] if len(words) == 1 else ""


def _year(question: str, spans: list[tuple[int, int]]) -> str:
    match = _YEAR.search(question)
    if not match:
        return ""
    spans.append(match.span())
    return match.group("a") or match.group("b")


def _shown(question: str, spans: list[tuple[int, int]]) -> int:
    """How many the reader asked for: a number, one for "the newest article", else five."""
    match = _SHOWN.search(question)
    if match:
        spans.append(match.span())
        said = (match.group("a") or match.group("b")).lower()
        return int(said) if said.isdigit() else _NUMBERS[said]
    return 1 if _SINGLE.search(question) and not _PLURAL.search(question) else DEFAULT_SHOWN


def _nothing_else(question: str, spans: list[tuple[int, int]]) -> bool:
    """Nothing but the framing is left once the facets are taken out."""
    rest = list(question)
    for start, end in spans:
        rest[start:end] = " " * (end - start)
    left = _FRAME_ZH.sub(" ", "".join(rest).lower())
    if CJK_RUN.search(left):
        return False
    words = re.findall(r"[a-z][a-z'-]*", left)
    return not any(terms(word) for word in words if word not in _FRAME_WORDS)


def _record(question: str) -> CatalogueAsk | None:
    """A field of one article the question names by title or topic."""
    subject = _subject(question)
    if not subject:
        return None
    # The field is asked of the question without the title: "When was the “Tags and search”
    # article published?" asks for its date, not its tags.
    field = ask_of_record(question.replace(subject, " "))
    return CatalogueAsk("record", field=field, subject=subject) if field else None


_TITLE = re.compile(
    r"《(?P<a>[^》]+)》|[\"“‘](?P<b>[^\"”’]{3,80})[\"”’]|(?<!\w)'(?P<c>[^']{3,80})'(?!\w)"
)
_NAMED = (
    re.compile(
        r"\b(article|post|piece)\s+(about|on|called|titled|named|covering)\s+"
        r"(?P<s>[\w .+#-]{2,40}?)(?=\s+(is|was|were|has|have|had|come|came|published|posted|"
        r"written|go|went|in|from|about)\b|[?？.!]|$)",
        re.IGNORECASE,
    ),
    # The subject's words are not "the": "the tags of the pgvector article" names "pgvector".
    re.compile(
        r"\b(the|that)\s+(?P<s>(?!the\b)[\w.+#-]+( (?!the\b)[\w.+#-]+){0,3}?)"
        r"\s+(article|post|piece)\b",
        re.I,
    ),
    re.compile(r"(关于|讲|介绍|写)\s*(?P<s>[^，。？！?《》]{1,16}?)\s*的?(那篇|这篇|那一篇)"),
    re.compile(r"(?P<s>[^，。？！?《》\s]{2,16}?)\s*的?(那篇|这篇|那一篇)"),
)


def _subject(question: str) -> str:
    """The words naming the article: a quoted title, "the X article", "the article on X",
    "X 那篇"."""
    match = _TITLE.search(question) or next(
        (m for pattern in _NAMED if (m := pattern.search(question))), None
    )
    if not match:
        return ""
    named = next((g for g in match.groupdict().values() if g), "").strip()
    named = re.sub(r"^(关于|讲|介绍)|的$", "", named).strip()
    return "" if named.lower() in _FRAME_WORDS else named
