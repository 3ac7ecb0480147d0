"""Reading Markdown for the offline model: quotable facts, section leads, and matching terms.

A fact is one thing an article says that can be quoted on its own: a sentence of a paragraph,
a list item, or a table row written out with its header. Code blocks are dropped, and so is
any sentence that only introduces something dropped (it ends with a colon).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from agent.text import one_line
from blog.chunking import TABLE_RULE

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK}]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9\-']*[a-z0-9]|[a-z0-9]")
# A letter on its own names a parameter ("HNSW's m", "RRF's k"); "a", "i", "e.g." and "i.e."
# do not, nor does a contraction's or a possessive's remnant ("s", "t").
_NAMED_LETTERS = frozenset("bcdfhjklmnpqrvwxyz")
# A Chinese figure's unit: the character after a number ("384 维", "30 秒", "5 次").
_UNIT = re.compile(f"\\d\\s*([{CJK}])")
UNIT_MARK = "#"  # a unit term is "#" and its character: no word of a question looks like it
_STOPWORDS = frozenset(
    "a an and are about can could did does do for from had has have how into its the this that "
    "these those what when where which who why will with would you your our their there then "
    "than was were been being not but any all some more most much many tell explain describe "
    "please say says said article articles post posts blog one way ways use used using get "
    "is it in on of to or by as at be if so my me i we us should does doesn't don't it's "
    "them they it's also just only very really still yet each other else while "
    # How a question is framed, not what it is about ("what's the difference between…").
    "difference differences different between instead rather "
    # A phrasal verb's particle: "cut off" matched "back off".
    "off up out down over".split()
)
_CJK_STOP = frozenset(
    "什么 怎么 如何 为什 哪些 一个 这个 那个 是否 可以 文章 这篇 本文 请问 一下 的是 是什 "
    "有什 么样 哪个 吗 呢 我们 你们 他们 应该 需要 时候 为何 多少 "
    "而不 不是".split()  # "而不是": how a comparison is framed
)


@dataclass(frozen=True)
class Fact:
    """One quotable statement; `kind` is "sentence", "item" (list) or "row" (table)."""

    text: str
    kind: str
    section: str
    order: int
    group: int = 0  # facts of one table (or list) share it
    header: str = ""  # a table row's column names: they describe the row, they don't match it


def language(text: str) -> str:
    """ "zh" when the text has Chinese characters, else "en"."""
    return "zh" if CJK_RUN.search(text) else "en"


def answer_language(question: str, reader: str = "") -> str:
    """The language to answer in: the question's own, else the one the reader reads the site in.

    Chinese characters make a Chinese question, and English words of phrasing ("what", "is",
    "how", "the") an English one. Names and terms alone ("HNSW index", "pgvector 0.8") have no
    language: on a Chinese page the reader expects Chinese. `reader` is a language code
    ("zh-hans") or "".
    """
    if CJK_RUN.search(question):
        return "zh"
    phrased = _STOPWORDS.intersection(_WORD.findall(question.lower()))
    return "zh" if reader.startswith("zh") and not phrased else "en"


_SUFFIXES = (
    ("ies", "y"),
    ("ings", ""),
    ("ing", ""),
    ("est", ""),
    ("es", ""),
    ("ed", ""),
    ("s", ""),
)


def _stem(word: str) -> str:
    # Just enough to meet "indexes"/"index", "limits"/"limit", "streaming"/"stream". "ings"
    # goes whole: with "ing" first, "embeddings" kept "embedding" while "embedding" became
    # "embedd", and a question's plural never met the article's singular, nor its glossary line.
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + keep
    return word


# "can't", "they're" carry no topic; "PostgreSQL's" is about PostgreSQL (see blog.chunking).
_CONTRACTION = re.compile(r"\b[a-z]+n't\b|\b[a-z]+'(re|ve|ll|d|m)\b")
_POSSESSIVE = re.compile(r"'s\b")


# A reader writes "after ten calls" where the table says "10". ("one" is left out: "one of
# them", "the one that" are not counts.)
_NUMBER_WORDS = dict(
    zip(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
        "ninety hundred".split(),
        [*map(str, range(2, 21)), *map(str, range(30, 101, 10))],
        strict=True,
    )
)


_PERIODIC = {"daily": "day", "hourly": "hour", "weekly": "week", "monthly": "month"}

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")

# A verb and its particle name one thing, the thing the blog writes as one word: "back up" is
# a backup, and the "back" of "fall back" is not it ("How do I back up the database?" quoted a
# sentence about a query that falls back to a full scan). Each spelling of the pair is its noun.
_PHRASAL = {
    ("back", "up"): "backup",
    ("fall", "back"): "fallback",
    ("roll", "back"): "rollback",
    ("set", "up"): "setup",
    ("shut", "down"): "shutdown",
    ("start", "up"): "startup",
    ("clean", "up"): "cleanup",
    ("look", "up"): "lookup",
    ("warm", "up"): "warmup",
    ("time", "out"): "timeout",
    ("log", "in"): "login",
    ("sign", "in"): "signin",
    ("sign", "up"): "signup",
}
# Each verb's spellings ("falls", "fell", "timed", "backing"), and the pair's noun.
_SPELLINGS = {
    "back": "back|backs|backed|backing",
    "fall": "fall|falls|fell|falling|fallen",
    "roll": "roll|rolls|rolled|rolling",
    "set": "set|sets|setting",
    "shut": "shut|shuts|shutting",
    "start": "start|starts|started|starting",
    "clean": "clean|cleans|cleaned|cleaning",
    "look": "look|looks|looked|looking",
    "warm": "warm|warms|warmed|warming",
    "time": "time|times|timed|timing",
    "log": "log|logs|logged|logging",
    "sign": "sign|signs|signed|signing",
}
_VERB = {spelling: verb for verb, forms in _SPELLINGS.items() for spelling in forms.split("|")}
_PARTICLE_PAIR = re.compile(
    rf"\b({'|'.join(sorted(_VERB, key=len, reverse=True))})[ \t-]+(up|back|down|out|in)\b"
)


def _joined(match: re.Match) -> str:
    return _PHRASAL.get((_VERB[match.group(1)], match.group(2)), match.group(0))


def terms(text: str) -> set[str]:
    """Lower-cased, lightly stemmed content words plus CJK character bigrams.

    Number words count as their digits, so "ten" meets "10"; "1,000" is "1000".
    """
    lowered = text.lower().replace("\u2019", "'")
    lowered = _POSSESSIVE.sub("", _CONTRACTION.sub(" ", lowered))
    lowered = _THOUSANDS.sub("", lowered)  # "10,500" is one number, not "10" and "500"
    lowered = _PARTICLE_PAIR.sub(_joined, lowered)
    words = _WORD.findall(lowered)
    # "Per-session daily budget" answers "how many tokens does a session get per day?": a
    # hyphenated word is also its parts, and "daily" is the "day" a question counts by.
    words += [part for word in words if "-" in word for part in word.split("-")]
    found = {
        _NUMBER_WORDS.get(w) or _PERIODIC.get(w) or _stem(w)
        for w in words
        if (len(w) > 1 or w in _NAMED_LETTERS) and w not in _STOPWORDS
    }
    for run in CJK_RUN.findall(lowered):
        grams = {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
        found |= grams - _CJK_STOP
    return found | {UNIT_MARK + unit for unit in _UNIT.findall(lowered)}


_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links
    (re.compile(r"(\*\*|\*|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # not snake_case
    (re.compile(r"</?[A-Za-z][^>]*>"), ""),  # HTML tags, not "a <= b"
]
# Inline code is the article's exact words: "`<#>`" is pgvector's inner-product operator, not
# a tag to strip, and "`__init__`" is not emphasis. Its marks go, its text stays as written.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_HELD = re.compile("\ue000(\\d+)\ue001")
_ITEM = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+")
_QUOTE = re.compile(r"^\s*(?:>\s*)+")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9\u3400-\u9fff])|(?<=[。！？])")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
# A link reference definition, "[label]: destination 'title'" (CommonMark 4.7): where a
# "[text][label]" link points. The page shows nothing for it, so it is no fact to quote.
_LINK_TITLE = r"""(?:"[^"]*"|'[^']*'|\([^)]*\))"""
_DEFINITION = re.compile(
    r"^ {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*"
    rf"(?P<to>(?:<[^>]*>|\S+)(?:[ \t]+{_LINK_TITLE})?)?[ \t]*$"
)
_TITLE_LINE = re.compile(rf"^\s*{_LINK_TITLE}\s*$")


# Quoted text must read as itself in the chat's Markdown and in the admin's (CommonMark). "]"
# followed by "(", "[" or ":" is where a link's label meets its target (or a reference), and
# "<scheme:…>" is an autolink. plain() keeps inline code's text without its backticks, so
# "`[x](https://…)`", code on the article page, was a live link to another site in the answer.
_SEAM = re.compile(r"\](?=[(\[:])")
_AUTOLINK = re.compile(r"<(?=[A-Za-z][A-Za-z0-9.+-]{1,31}:|[^\s<>@]+@[^\s<>@]+>)")


def inert(text: str) -> str:
    """Text as Markdown that shows as itself: no link can form in it or reach out of it."""
    return _AUTOLINK.sub("< ", _SEAM.sub("] ", text))


def link_label(text: str) -> str:
    """Text for a link the offline model makes: one line (a title's line break split the link),
    and its brackets cannot end the label early."""
    return inert(one_line(text)).replace("[", "(").replace("]", ")")


def article_text(article: dict) -> str:
    """An article's title, summary and body as one text (a search hit has no summary)."""
    return f"{article.get('title', '')} {article.get('summary', '')} {article.get('body', '')}"


def plain(text: str) -> str:
    """Inline Markdown removed: links keep their text, emphasis and code marks go."""
    codes: list[str] = []

    def hold(match: re.Match) -> str:  # a private-use mark no other rule can touch
        codes.append(match.group(2).strip())
        return f"\ue000{len(codes) - 1}\ue001"

    text = _CODE_SPAN.sub(hold, text)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    text = _HELD.sub(lambda m: codes[int(m.group(1))] if int(m.group(1)) < len(codes) else "", text)
    return " ".join(text.split())


def _cells(line: str) -> list[str]:
    return [plain(cell) for cell in line.strip().strip("|").split("|")]


def _row_fact(header: list[str], cells: list[str]) -> tuple[str, str]:
    """ "Index: HNSW — Build time: 18 s; Recall: 0.99" -- a row with its header, quotable alone.

    The first cell is named by its header as the others are: "Index HNSW" read well, but
    "Condition Model call budget exhausted (5 calls) — …" did not.
    """
    pairs = [(h, c) for h, c in zip(header, cells, strict=False) if c]
    if not pairs:
        return "", ""
    lead, *details = [_named(head, cell) for head, cell in pairs]
    chinese = language("".join(header)) == "zh"
    joined = ("；" if chinese else "; ").join(details)
    return (f"{lead} — {joined}" if joined else lead), " ".join(h for h, _ in pairs)


def _named(head: str, cell: str) -> str:
    # After a Chinese header the full-width colon, as Chinese writes it ("上限：每轮最多 6 次").
    if not head:
        return cell
    return f"{head}{'：' if language(head) == 'zh' else ': '}{cell}"


def _definition_lines(lines: list[str]) -> set[int]:
    """Where the link reference definitions are. One opens a paragraph or a list item: it
    cannot interrupt a paragraph, where CommonMark shows it as text. Its destination or title
    may follow on the next line."""
    found: set[int] = set()
    opens, expect = True, ""  # expect: what of a definition may still follow
    for at, line in enumerate(lines):
        item = _ITEM.match(line)
        text = _QUOTE.sub("", line[item.end() :] if item else line)
        if expect and text.strip() and (expect == "to" or _TITLE_LINE.match(text)):
            found.add(at)
            expect = ""
            continue
        definition = _DEFINITION.match(text) if opens or item else None
        if definition:
            found.add(at)
            expect = "title" if definition.group("to") else "to"
            continue
        opens, expect = not text.strip() or bool(_HEADING.match(line)), ""
    return found


def blocks(body: str) -> list[tuple[str, str, str, str]]:
    """(kind, section, text, header) for each paragraph, list item and table row, no code."""
    body = _FENCE.sub("\n", _FRONT_MATTER.sub("", body))
    found: list[tuple[str, str, str]] = []
    section, paragraph, item, header = "", [], None, None

    def flush() -> None:
        nonlocal paragraph, item
        if paragraph:
            found.append(("paragraph", section, plain(" ".join(paragraph)), ""))
        if item:
            found.append(("item", section, plain(" ".join(item)), ""))
        paragraph, item = [], None

    lines = body.splitlines()
    definitions = _definition_lines(lines)
    for at, line in enumerate(lines):
        stripped = line.strip()
        heading = _HEADING.match(line)
        if at in definitions:
            flush()  # it opens a paragraph or an item: nothing of a paragraph is lost
            continue
        if not stripped or heading or stripped.startswith(("---", "***", "___")):
            flush()
            header = None
            if heading:
                section = plain(heading.group(2))
            continue
        if stripped.startswith("|") or (header is not None and "|" in stripped):
            flush()
            if TABLE_RULE.match(stripped):
                continue
            if header is None:
                header = _cells(stripped)
            else:
                found.append(("row", section, *_row_fact(header, _cells(stripped))))
            continue
        if line.startswith(("    ", "\t")) and item is None and not paragraph:
            continue  # an indented code block
        if _ITEM.match(line):
            flush()
            item = [_ITEM.sub("", line)]
        elif item is not None:
            item.append(stripped)
        else:
            paragraph.append(_QUOTE.sub("", line))
    flush()
    return [block for block in found if block[2]]


def sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences, without those that only introduce a dropped block."""
    kept = []
    for sentence in _SPLIT.split(paragraph):
        sentence = sentence.strip()
        if not sentence or sentence.endswith((":", "：")):
            continue
        if len(sentence) >= (6 if CJK_RUN.search(sentence) else 20):
            kept.append(sentence)
    return kept


# A turn reads an article's facts twice (to quote, and to weigh its words: the quoted facts
# lose the clauses pointing at other articles), and the next turns read the same few articles.
@lru_cache(maxsize=64)
def article_facts(body: str) -> tuple[Fact, ...]:
    """Every quotable fact of an article body, in reading order."""
    facts: list[Fact] = []
    group, previous = 0, None
    for n, (kind, section, text, header) in enumerate(blocks(body)):
        if (kind, section) != previous or kind == "paragraph":
            group = n
        previous = (kind, section)
        if kind == "paragraph":
            for sentence in sentences(text):
                facts.append(Fact(sentence, "sentence", section, len(facts), group))
        elif not text.endswith((":", "：")) and len(text) >= 3:
            facts.append(Fact(text, kind, section, len(facts), group, header))
    return tuple(facts)


# A link to another of the blog's articles, outside code: "described in [Why step limits
# matter](/articles/why-step-limits-matter/)".
_ARTICLE_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\((/articles/[^)\s#?]+)[^)]*\)")


def article_pointers(body: str, url: str = "") -> set[str]:
    """The names an article gives the other articles it links to: each link's text, plain, as
    a quoted fact shows it ("Why step limits matter", "取消与超时"). A link to `url`, the
    article's own address, points at nothing else."""
    own = url.split("#")[0].rstrip("/")
    text = _CODE_SPAN.sub(" ", _FENCE.sub("\n", body))  # code shows a link, it does not make one
    return {
        plain(label)
        for label, target in _ARTICLE_LINK.findall(text)
        if target.rstrip("/") != own and plain(label)
    }


# Where a sentence's clauses meet: "…per turn, described in X, this bounds…", "…相似度，详见 X。"
_CLAUSE = re.compile(r"(?<=[,;])\s+|(?<=[，；])")


def without_pointers(fact: Fact, pointers: set[str]) -> Fact | None:
    """The fact less the clauses naming an article it links to ("…, described in Why step
    limits matter, …", "…，详见 pgvector 与 HNSW。"); None when its first clause names one
    ("Cancellation is covered in the Chinese-language post 取消与超时."): the whole of it points
    away. A quoted name would be an article the answer names without citing it."""
    if not any(name in fact.text for name in pointers):
        return fact
    clauses = _CLAUSE.split(fact.text)
    kept = [c for c in clauses if not any(name in c for name in pointers)]
    if not kept or kept[0] != clauses[0]:
        return None
    text = " ".join(kept) if fact.text.isascii() else "".join(kept)
    end = fact.text[-1] if fact.text[-1] in ".!?。！？" else ""
    return replace(fact, text=text.rstrip(",;，； ") + (end if not text.endswith(end) else ""))


def section_leads(body: str) -> list[tuple[str, str]]:
    """(heading, first sentence) of each section that opens with a paragraph."""
    leads: dict[str, str] = {}
    for kind, section, text, _ in blocks(body):
        if section in leads or kind != "paragraph":
            continue
        first = sentences(text)
        if first:
            leads[section] = first[0]
    return [(section, lead) for section, lead in leads.items() if section]
