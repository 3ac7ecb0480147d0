"""Markdown-aware chunking, sized for retrieval, with a length measure that works for Chinese.

An article is split at its headings into sections; each section is packed paragraph by
paragraph into chunks of about `target` tokens, and each chunk after the first in a section
repeats the last sentences of the one before (about `overlap` tokens) so an idea cut at a
boundary is still whole somewhere. Fenced code blocks stay whole unless they alone are too big.
A "token" is a Latin word or a single CJK character: close to what multilingual-e5 sees, and
it needs no tokenizer.
"""

import re
from dataclasses import dataclass

# Han, kana and hangul: scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_LATIN_WORD = re.compile(rf"[^\W_{_CJK}]+")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A table's delimiter row ("|:---|--:|"): GFM asks for one dash per cell, not three. The
# offline model reads tables by the same rule (agent/llm/offline_text.py).
TABLE_RULE = re.compile(r"^\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?)?\s*\|?$")
# A Markdown link or image: its text says what it is about, its target is an address.
# The target may hold balanced parentheses ("…/HNSW_(algorithm)"), and a title any of
# CommonMark's three quotes.
_LINK = re.compile(
    r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
# A sentence ends at . ! ? (then a space) or at a full-width 。！？ (no space in Chinese).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
# Characters of Chinese questions that carry no topic ("what", "how", particles): their
# bigrams would match every Chinese article equally and drown the real terms.
_CJK_QUERY_STOP = set("的了吗呢吧啊么什怎哪谁这那们是很就都也把被着")
# English contractions, typed with or without the apostrophe: "isn't" would otherwise leave
# "isn" and "t", words the blog never uses, and the relevance bar would read the question as
# off-topic. Their stems are stop words ("is", "they"), so dropping them loses nothing; a
# possessive keeps its noun ("the agent's loop").
_CONTRACTION = re.compile(r"\b\w+n['’]t\b|\b\w+['’](re|ve|ll|d|m)\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)
_RUN_TOGETHER = re.compile(
    r"\b(isnt|arent|wasnt|werent|dont|doesnt|didnt|cant|couldnt|wont|wouldnt|shouldnt|"
    r"hasnt|havent|hadnt|whats|hows|wheres|whos|thats|theres|im|ive|youre|theyre)\b",
    re.IGNORECASE,
)
# How a reader asks, not what about: "Tell me about HNSW" is a question about HNSW. Kept, "tell"
# weighed most (the blog writes it twice) and an article telling the model things outranked
# the one on HNSW; "pls" counted as a word the blog does not know, as if off-topic.
_FRAMING = frozenset(
    "tell explain describe please pls plz kindly thanks thank thx hi hey hello".split()
)
# The same for a Chinese question: "请问 HNSW 是什么？" searched 请问 ("may I ask") as a topic the
# blog never writes, and was declined; "能不能简单介绍一下 RRF" likewise.
_CJK_FRAMING = re.compile(
    "请问|想问一下|想问|问一下|麻烦你|麻烦|能不能|能否|可不可以|帮我|帮忙|介绍一下|介绍|"
    "讲一讲|讲讲|说一说|说说|解释一下|告诉我|谢谢|你好|您好"
)
# So is asking what a thing is for: "幂等键有什么作用？" weighed 作用 ("use"), which the article
# on idempotency keys never writes, and the boundary bigram 键有, as if they were its topic.
# Cut out with a mark: a character the frame leaves alone before it ("Retry-After 头是做什么的")
# made a bigram with the frame, which the question particles dropped, and is dropped with it.
_CJK_PURPOSE = re.compile(
    "有什么作用|有什么用处|有什么用|有啥用|有何作用|起什么作用|的作用是什么|作用是什么|"
    "是干什么用的|是做什么用的|是干什么的|是做什么的|干什么用|做什么用|用来做什么|用来干什么"
)
_CUT = "\x00"
# "How much" and "how many" ask for a quantity, and the stance adverbs of speech ("actually",
# "exactly") for nothing: the ask, not the topic. An article answers "How much does a runaway
# agent cost?" with a figure, seldom with the word "much"; kept, "much" (one chunk of the blog)
# weighed more than "runaway" or "cost", and the step-limits article covered half the question.
# "How long", "how often", "how big" name the measure (time, frequency, size), which articles
# write too ("idle timeouts, often around 60 seconds"): those stay.
_QUANTITY = re.compile(r"\b(how\s+)(?:much|many)\b", re.IGNORECASE)
_STANCE = frozenset("actually exactly basically literally honestly essentially".split())
# The same in Chinese: 多少 and 几个 ask for a quantity ("HNSW 的 m 默认是多少？"). 多少 is in one
# chunk of the blog, so it weighed more than "m" or 默认; 几个 made bigrams with its neighbours
# (问几, 个问) that no article writes. Cut out with a mark, like the purpose frame. 多大, 多久 and
# a measure after 几 (几秒, 几次) name what is asked for, and stay; so does 多少 after an
# adjective ("比原文大多少", how much bigger): cut, it left 文大, a pair no article writes.
_CJK_QUANTITY = re.compile("(?<![大小快慢高低长短好差])多少个?|几个")


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before it is embedded: its position, heading path and Markdown text."""

    ordinal: int
    heading_path: str
    text: str


@dataclass(frozen=True)
class _Block:
    text: str
    tokens: int
    is_code: bool


def token_count(text: str) -> int:
    """Length in tokens: each Latin word and each CJK character counts one."""
    return len(_TOKEN.findall(text))


def markdown_chunk(*, body: str, target: int = 350, overlap: int = 50) -> list[ChunkDraft]:
    """Split a Markdown body into retrieval chunks that never cross a heading."""
    drafts: list[ChunkDraft] = []
    for path, blocks in _sections(body):
        for text in _pack(blocks, target=target, overlap=overlap):
            drafts.append(ChunkDraft(ordinal=len(drafts), heading_path=path, text=text))
    return drafts


def embedding_text(*, title: str, heading_path: str, text: str, summary: str = "") -> str:
    """What gets embedded and indexed: a header of title, heading path and the article's
    summary, then the chunk, so a short or pronoun-heavy chunk still says what it is about."""
    context = f"{title} > {heading_path}" if heading_path else title
    header = f"{context}\n{summary.strip()}" if summary.strip() else context
    return f"{header}\n\n{link_targets_drop(text)}"


def vector_text(text: str) -> str:
    """The embedding model's reading of `embedding_text`: table rows spelled out.

    e5 was trained on prose, not pipes: a row given as "Condition: …; Status recorded: …." sits
    nearer the way a question asks for it. Full text keeps the table as written (spelling rows
    out repeats the column names in every row, which would inflate their rank).
    """
    lines: list[str] = []
    header: list[str] | None = None
    fenced = False  # a table shown in a code block is code: kept as written
    for line in text.split("\n"):
        stripped = line.strip()
        fence = bool(_FENCE.match(line))
        fenced ^= fence
        if fenced or fence or not stripped.startswith("|"):
            header = None
            lines.append(line)
        elif TABLE_RULE.match(stripped):
            continue
        elif header is None:
            header = _table_cells(stripped)
        else:
            pairs = zip(header, _table_cells(stripped), strict=False)
            lines.append(
                "; ".join(f"{name}: {cell}" if name else cell for name, cell in pairs) + "."
            )
    return "\n".join(lines)


def _table_cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def link_targets_drop(text: str) -> str:
    """Markdown links reduced to their text: "[取消与超时](/articles/c-zh/)" → "取消与超时".

    An address is not meaning. Embedded, a cross-reference's path pulled the passage holding
    it toward questions about the other article (with the Chinese link text, it made one English
    passage the nearest English one to almost every Chinese question); indexed, its words
    ("articles", slugs) matched questions that merely used them.
    """
    return _LINK.sub(r"\1", text)


def lexical_text(text: str) -> str:
    """Text for PostgreSQL's parser: each run of CJK characters becomes its bigrams.

    "向量检索" becomes " 向量 量检 检索 ", so a two-character word inside a sentence is a
    lexeme of its own, and a Latin word glued to Chinese ("用pgvector建") is split off.
    """
    return _CJK_RUN.sub(lambda match: f" {' '.join(_bigrams(match.group()))} ", text)


def language_detect(text: str) -> str:
    """ "zh" when CJK characters are at least a fifth of the letters, else "en".

    Code and identifiers inside a Chinese article are Latin, hence the low bar.
    """
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    latin = sum(len(word) for word in _LATIN_WORD.findall(text))
    return "zh" if cjk and cjk * 5 >= cjk + latin else "en"


def query_terms(query: str) -> list[str]:
    """Search terms of a visitor's query: Latin words and CJK bigrams, deduplicated."""
    query = _POSSESSIVE.sub("", _RUN_TOGETHER.sub(" ", _CONTRACTION.sub(" ", query)))
    terms = [word.lower() for word in _LATIN_WORD.findall(_QUANTITY.sub(r"\1", query))]
    terms = [word for word in terms if word not in _FRAMING and word not in _STANCE]
    text = _CJK_FRAMING.sub(" ", _CJK_QUANTITY.sub(_CUT, _CJK_PURPOSE.sub(_CUT, query)))
    runs = [
        run.group()
        for run in _CJK_RUN.finditer(text)
        if len(run.group()) > 1 or not text.startswith(_CUT, run.end())
    ]
    grams = [gram for run in runs for gram in _bigrams(run)]
    topical = [gram for gram in grams if not _CJK_QUERY_STOP.intersection(gram)]
    terms += topical if (terms or topical) else grams
    return list(dict.fromkeys(terms))


# A file name ("asgi.py", "nginx.conf"): PostgreSQL's parser keeps it one token, `query_terms`
# cuts it into its stem and its extension.
# It may end a sentence ("… from asgi.py. What …").
_FILE_NAME = re.compile(r"(?<![\w.])[A-Za-z0-9_][\w-]*\.([A-Za-z]{1,5})(?!\w|\.\w)")


def file_extensions(query: str, written: dict[str, int]) -> set[str]:
    """Extensions of the query's file names that the blog writes (`written`: its lexemes).

    The index holds "asgi.py" whole, so the question's "py" is a word no chunk has: it would
    count against the question as a rare word the blog never uses, and no article could cover
    it, though the blog writes the very file the reader names.
    """
    return {
        match.group(1).lower()
        for match in _FILE_NAME.finditer(query)
        if match.group(0).lower() in written
    }


def _bigrams(run: str) -> list[str]:
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _sections(body: str) -> list[tuple[str, list[_Block]]]:
    """Blocks (paragraphs, lists, tables, code) grouped under their heading path."""
    sections: list[tuple[str, list[_Block]]] = []
    headings: list[tuple[int, str]] = []
    current: list[_Block] = []
    path = ""
    for kind, text in _blocks(body):
        if kind == "heading":
            if current:
                sections.append((path, current))
            level, title = text
            headings = [(lvl, name) for lvl, name in headings if lvl < level] + [(level, title)]
            path, current = " > ".join(name for _, name in headings), []
        else:
            current.append(_Block(text=text, tokens=token_count(text), is_code=kind == "code"))
    if current:
        sections.append((path, current))
    return sections


def _blocks(body: str):
    """Yield ("heading", (level, title)), ("code", text) and ("para", text) in order."""
    lines: list[str] = []
    fence: str | None = None
    for line in body.replace("\r\n", "\n").split("\n"):
        if fence is not None:
            lines.append(line)
            if line.strip().startswith(fence):
                yield "code", "\n".join(lines)
                lines, fence = [], None
            continue
        opening = _FENCE.match(line)
        heading = _HEADING.match(line)
        if opening or heading or not line.strip():
            if lines:
                yield "para", "\n".join(lines).strip()
                lines = []
        if opening:
            fence, lines = opening.group(1), [line]
        elif heading:
            yield "heading", (len(heading.group(1)), heading.group(2).strip())
        elif line.strip():
            lines.append(line)
    if lines:
        yield ("code" if fence else "para"), "\n".join(lines).strip()


def _pack(blocks: list[_Block], *, target: int, overlap: int) -> list[str]:
    """Greedily fill chunks with blocks; start each new chunk with the previous one's tail."""
    chunks: list[list[_Block]] = []
    current: list[_Block] = []
    carried = size = 0  # `carried`: how many leading blocks repeat the previous chunk
    # Oversized blocks are cut to leave room for the overlap in front of each piece.
    for block in _fit(blocks, target=target, room=max(target - overlap, target // 2)):
        if len(current) > carried and size + block.tokens > target:
            chunks.append(current)
            current = _tail(current, overlap=overlap)
            carried, size = len(current), sum(part.tokens for part in current)
        if carried and len(current) == carried and size + block.tokens > target:
            current, carried, size = [], 0, 0  # no room for the overlap next to this block
        current.append(block)
        size += block.tokens
    if len(current) > carried:
        chunks.append(current)
    return ["\n\n".join(block.text for block in chunk) for chunk in chunks]


def _fit(blocks: list[_Block], *, target: int, room: int) -> list[_Block]:
    """Split blocks larger than `target` into pieces of `room`: prose at sentences, code at
    lines (re-fenced)."""
    fitted: list[_Block] = []
    for block in blocks:
        if block.tokens <= target:
            fitted.append(block)
        elif block.is_code:
            fitted += _split_code(block, target=target)
        else:
            fitted += _split_prose(block.text, target=room)
    return fitted


def _split_prose(text: str, *, target: int) -> list[_Block]:
    pieces: list[str] = []
    for sentence in (part for part in _SENTENCE_END.split(text) if part.strip()):
        joiner = "" if _CJK_RUN.match(sentence) else " "
        if pieces and token_count(pieces[-1]) + token_count(sentence) <= target:
            pieces[-1] = f"{pieces[-1]}{joiner}{sentence.strip()}"
        else:
            pieces += _split_words(sentence.strip(), target=target)
    return [_Block(text=piece, tokens=token_count(piece), is_code=False) for piece in pieces]


def _split_words(sentence: str, *, target: int) -> list[str]:
    """Last resort for a sentence longer than a chunk: cut it every `target` tokens."""
    if token_count(sentence) <= target:
        return [sentence]
    starts = [match.start() for match in _TOKEN.finditer(sentence)][::target]
    return [
        sentence[a:b].strip() for a, b in zip(starts, [*starts[1:], len(sentence)], strict=True)
    ]


def _split_code(block: _Block, *, target: int) -> list[_Block]:
    lines = block.text.split("\n")
    fence, inner = lines[0], lines[1:-1] if _FENCE.match(lines[-1]) else lines[1:]
    closing = fence.strip()[:3]
    pieces: list[list[str]] = [[]]
    for line in inner:
        if pieces[-1] and token_count("\n".join([*pieces[-1], line])) > target:
            pieces.append([])
        pieces[-1].append(line)
    texts = ["\n".join([fence, *piece, closing]) for piece in pieces]
    return [_Block(text=text, tokens=token_count(text), is_code=True) for text in texts]


def _tail(chunk: list[_Block], *, overlap: int) -> list[_Block]:
    """The last sentences of a chunk, up to `overlap` tokens; none after code."""
    if overlap <= 0 or chunk[-1].is_code:
        return []
    kept: list[str] = []
    size = 0
    for sentence in reversed([s for s in _SENTENCE_END.split(chunk[-1].text) if s.strip()]):
        tokens = token_count(sentence)
        if size + tokens > overlap:
            break
        kept.insert(0, sentence.strip())
        size += tokens
    if not kept:
        return []
    text = ("" if _CJK_RUN.match(kept[0]) else " ").join(kept)
    return [_Block(text=text, tokens=size, is_code=False)]
