""" "What is X?": the sentence that defines X answers it better than one that only uses X.

A librarian asked "what is RRF?" reads out "Reciprocal rank fusion (RRF) is …", not the
sentence with the most words in common with the question.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import CJK, terms

_SUBJECT = r"(?P<subject>[^?？。!！,，]{1,60}?)"
_ASKS = (
    re.compile(
        rf"^\s*(what|who)(?:'s| is| are| does| do) (?:an? |the )?{_SUBJECT}"
        r"(?: mean| stand for| refer to| do)?\s*[?？.!]*\s*$",
        re.IGNORECASE,
    ),
    re.compile(
        r"^\s*(?:(?:can|could|would) you |please )?(define|explain|describe|tell me about|"
        rf"talk about) (?:an? |the )?{_SUBJECT}\s*[?？.!]*\s*$",
        re.I,
    ),
    # "介绍一下 RRF", "能不能简单讲讲 HNSW", "解释一下 ef_search": asking to be told what it is.
    re.compile(
        r"^\s*(?:请|麻烦)?你?(?:能不能|能否|可以|可不可以)?(?:简单)?地?"
        rf"(?:介绍|讲讲|讲一讲|说说|说一说|解释)(?:一下)?\s*{_SUBJECT}\s*(?:吧|吗)?\s*[?？。!！]*\s*$"
    ),
    re.compile(rf"^\s*how (?:does|do) (?:an? |the )?{_SUBJECT} work\s*[?？.!]*\s*$", re.I),
    re.compile(
        rf"^\s*{_SUBJECT}\s*(?:是怎么|是如何|怎么|如何)(?:工作|运作|实现)的?\s*[?？。!！]*\s*$"
    ),
    re.compile(rf"^\s*(?:什么是|何为|何谓){_SUBJECT}\s*[?？。!！]*\s*$"),
    re.compile(
        rf"^\s*{_SUBJECT}\s*(?:是什么|是啥|指什么|是指什么|是什么意思)(?:东西)?\s*[?？。!！]*\s*$"
    ),
)
# The kinds a name is asked about as: "an HNSW index", "the RRF algorithm", "HNSW 索引".
_KINDS = (
    "index algorithm method technique model extension operator function library package tool "
    "pattern approach metric graph structure protocol framework "
    "索引 算法 方法 技术 模型 扩展 插件 函数 库 工具 模式 指标 协议 框架 结构 图"
)
_KIND_TERMS = frozenset(terms(_KINDS))
# "A step limit is also a sensor" says what else X is, to a reader who knows what it is; "X is
# not…" says what it is not. Neither tells a new reader what X is.
_DEFINING_EN = (
    r"(?:\s*\([^)]{1,40}\))?,?\s+(is|are|means|refers to|stands for|describes)\b"
    r"(?!\s+(?:also|not)\b)"
)
_DEFINING_ZH = r"(?:\s*[（(][^)）]{1,40}[)）])?\s*(是|指|就是|即|意思是)"


# A message that is only a name ("hnsw", "RRF?", "向量检索？") asks what it is: a librarian
# handed a note saying "HNSW" reads out what HNSW is, not a bullet that happens to use it.
_BARE = re.compile(rf"^\s*{_SUBJECT}\s*[?？]?\s*$")
BARE_WORDS = 3
# A "what is X?" is short: X is at most 60 characters. The limit also bounds the patterns'
# work: the subject may end in spaces and two runs of spaces follow it, so "ok", 3,980 spaces
# and "x" tried every split of the run for each of the subject's 60 lengths, 6.9 CPU-seconds
# of one turn, the web process answering nobody meanwhile (a regex holds the GIL).
MAX_DEFINING_CHARS = 160
_QUESTION_WORDS = re.compile(
    r"\b(what|who|why|how|when|where|which|whose|is|are|does|do|can|should|thanks?|ok|okay)\b|"
    r"[吗呢么啥吧]|什么|怎么|为什|如何|哪",
    re.IGNORECASE,
)


def defined_subject(question: str, *, bare: bool = True) -> str:
    """The X of "what is X?" / "X 是什么？" / a bare "X?", lower-cased; "" for any other.

    `bare=False` leaves out a message that is only a name: after an answer, "HNSW index" may
    lean on the conversation as much as ask what it is.
    """
    if len(question) > MAX_DEFINING_CHARS:
        return ""
    for pattern in _ASKS:
        match = pattern.match(question)
        if match:
            return match.group("subject").strip().lower()
    named = _BARE.match(question) if bare else None
    if named and _a_name(named.group("subject")):
        return named.group("subject").strip().lower()
    return ""


def _a_name(text: str) -> bool:
    return (
        len(text.split()) <= BARE_WORDS and not _QUESTION_WORDS.search(text) and bool(terms(text))
    )


def defines(text: str, subject: str) -> bool:
    """True when `text` opens by saying what `subject` is ("HNSW is…", "RRF（…）是…").

    A subject that is a name and its kind ("an HNSW index", "RRF 算法") is defined by the
    sentence saying what the name is: "HNSW stands for…" answers "What is an HNSW index?".
    """
    if not subject:
        return False
    if _opens_with_definition(text, subject) or _inverted(text, subject):
        return True
    name = _name_of(subject)
    return bool(name) and _opens_with_definition(text, name) and _written_as_name(text, name)


def _inverted(text: str, subject: str) -> bool:
    """ "An answer is grounded when…" defines "grounded answer": a thing with a quality is
    defined by saying when the thing has it."""
    words = subject.split()
    if len(words) != 2:
        return False
    quality, thing = (re.escape(word) for word in words)
    lead = re.sub(r"^(the|an?)\s+", "", text.strip(), flags=re.IGNORECASE)
    return bool(re.match(rf"{thing}s?\s+(is|are)\s+{quality}\b", lead, re.IGNORECASE))


def named(subject: str) -> str:
    """The name a subject asks about: "hnsw" for "hnsw index", the subject itself otherwise."""
    return _name_of(subject) or subject


def _name_of(subject: str) -> str:
    """The name in "hnsw index", "rrf 算法", "hnsw索引": the subject less the kind it ends in;
    "" when it does not end in a kind or is nothing else."""
    words = re.findall(rf"[{CJK}]+|[^\s{CJK}]+", subject)
    while words and terms(words[-1]) and terms(words[-1]) <= _KIND_TERMS:
        words.pop()
    name = " ".join(words)
    return name if name and len(name) < len(subject) else ""


def _written_as_name(text: str, name: str) -> bool:
    """The article writes `name` as a name where it opens: an acronym or inner capitals
    ("HNSW", "IVFFlat"), a digit or underscore ("BM25"), or lower case opening the sentence
    ("pgvector is…"). "A vector is…" says what a vector is, not a vector index."""
    lead = text.lstrip()
    at = lead.lower().find(name)
    if at < 0:
        return False
    written = lead[at : at + len(name)]
    return bool(re.search(r"\w[A-Z]|[\d_]", written)) or (at == 0 and written[:1].islower())


def _opens_with_definition(text: str, subject: str) -> bool:
    lead = re.sub(r"^(the|an?|in short,?)\s+", "", text.strip(), flags=re.IGNORECASE)
    if not lead.lower().startswith(subject):
        # "Reciprocal rank fusion (RRF) is…" defines "rrf": the subject in brackets.
        bracket = re.match(rf"^[^.。(（]{{1,60}}[(（]\s*{re.escape(subject)}\s*[)）]", lead, re.I)
        if not bracket:
            return False
        rest = lead[bracket.end() :]
    else:
        rest = lead[len(subject) :]
    return bool(re.match(_DEFINING_EN, rest, re.I) or re.match(_DEFINING_ZH, rest))


def names(heading: str, question: str, subject: str) -> bool:
    """True when a section heading is named by an explanation question: every word of
    "How HNSW works" is in "How does HNSW work?", and the heading names the whole subject."""
    heading_terms, subject_terms = terms(heading), terms(subject)
    return bool(subject_terms) and subject_terms <= heading_terms <= terms(question)
