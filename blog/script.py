"""Which script a Chinese text is written in, and the text in the other one.

The blog's Chinese articles are in Simplified characters; readers in Taiwan and Hong Kong write
Traditional ones. A question is matched against the articles in Simplified, and answered in
the script it was asked in. Framework-free: the answered-or-not rule reads declines with it.
The character tables are OpenCC's, from the `opencc-purepy` package (pure Python); the few
words the regions write differently are listed here.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from opencc_purepy import OpenCC

from blog.language import fullwidth_fold

# Cantonese as Hong Kong writes it, in its own characters: the grammar words, to Mandarin's
# (係 -> 是; character by character 係 would become 系, "system").
_CANTONESE = {
    "係": "是",
    "嘅": "的",
    "唔": "不",
    "點樣": "怎样",
    "點解": "为什么",
    "幾多": "多少",
    "咗": "了",
    "冇": "没有",
    "喺": "在",
    "啲": "些",
    "佢": "它",
    "咩": "什么",
    "邊個": "哪个",
}
# Computing words Taiwan and Hong Kong write differently from the mainland, which the articles
# follow; keyed in Simplified characters (after the character fold). Plain words, no phrases:
# OpenCC's own phrase table (tw2sp) was not used, as it also rewrites words the mainland shares
# (向量 -> 矢量, 查询 -> 查找).
_MAINLAND = {
    "资料库": "数据库",
    "资料表": "数据表",
    "资料量": "数据量",
    "资料结构": "数据结构",
    "使用者": "用户",
    "非同步": "异步",
    "预设": "默认",
    "逾时": "超时",
    "串流": "流式",
    "权杖": "令牌",
    "纪录": "记录",
    "资讯": "信息",
    "记忆体": "内存",
    "伺服器": "服务器",
    "执行绪": "线程",
    "演算法": "算法",
    "快取": "缓存",
    "伫列": "队列",
    "登入": "登录",
    "网路": "网络",
    "程式码": "代码",
    "程式": "程序",
    "函式": "函数",
    "物件": "对象",
    "变数": "变量",
    "软体": "软件",
    "硬体": "硬件",
    "位元组": "字节",
    "字串": "字符串",
    "阵列": "数组",
    "回圈": "循环",
    "档案": "文件",
    "连线": "连接",
    "搜寻": "搜索",
    "萤幕": "屏幕",
    "视窗": "窗口",
    "频宽": "带宽",
    "丛集": "集群",
    "稽核": "审计",
    "机械人": "机器人",
    "智慧体": "智能体",
    "人工智慧": "人工智能",
    "断词": "分词",
    "部落格": "博客",
    "网志": "博客",
    "数位": "数字",
    "汇入": "导入",
    "汇出": "导出",
    "呼叫": "调用",
    "讯息": "消息",
}
# 係 is also the second half of 關係 and 聯係 (relation) and the first of 係數 (coefficient).
_CANTONESE_WORD = re.compile(
    "|".join(sorted(_CANTONESE, key=len, reverse=True)).replace("係", "(?<![關聯联关])係(?!數)")
)
_MAINLAND_WORD = re.compile("|".join(sorted(_MAINLAND, key=len, reverse=True)))
# Kana: a Japanese question shares many Traditional-looking characters (検, 設定) and is no
# Chinese reader's; its script is left as it is.
# (Hiragana and katakana letters only: ・ and ー, at the block's end, also appear in Chinese
# text.)
_KANA = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")


@cache
def _converter(config: str) -> OpenCC:
    # Loaded on first use (about 0.1 s each): most questions are English or Simplified.
    return OpenCC(config)


def _convert(text: str, config: str) -> str:
    # The named method, not OpenCC.convert: convert catches every exception and returns its
    # message ("Conversion failed: …") as if it were the converted text.
    return getattr(_converter(config), config)(text)


def _changed(text: str, config: str) -> int:
    converted = _convert(text, config)
    if len(converted) != len(text):
        return 1 + abs(len(converted) - len(text))  # a phrase rewritten: at least one change
    return sum(1 for a, b in zip(text, converted, strict=True) if a != b)


def is_traditional(text: str) -> bool:
    """True when `text` leans Traditional: more of its characters change on the way to
    Simplified than on the way to Traditional.

    A mixed question ("中文全文检索為什麼…") counts as Traditional when most of the characters
    that differ between the scripts are Traditional; a Simplified one with a character both
    scripts share (著名) does not.
    """
    if not text or _KANA.search(text) or text.isascii():
        return False
    return _changed(text, "t2s") > _changed(text, "s2t")


def is_simplified(text: str) -> bool:
    """True when `text` leans Simplified: the mirror of is_traditional. A text with no
    character that differs between the scripts ("如何使用") leans neither way."""
    if not text or _KANA.search(text) or text.isascii():
        return False
    return _changed(text, "s2t") > _changed(text, "t2s")


def to_simplified(text: str) -> str:
    """`text` in Simplified characters and mainland wording when it leans Traditional, else
    unchanged.

    Taiwan's and Hong Kong's words become the mainland's the articles use (資料庫 -> 数据库,
    使用者 -> 用户, 逾時 -> 超时), so a question written in Taipei matches them word for word.
    """
    if not is_traditional(text):
        # "部落格有哪些文章？" leans neither way (every character is both scripts'), but its
        # words are Taiwan's: they become the articles' (博客) all the same.
        return text if is_simplified(text) else _mainland_words(text)
    mandarin = _CANTONESE_WORD.sub(lambda m: _CANTONESE[m.group()], text)
    return _mainland_words(_convert(mandarin, "t2s"))


def _mainland_words(text: str) -> str:
    return _MAINLAND_WORD.sub(lambda m: _MAINLAND[m.group()], text)


def taiwan_wording(text: str) -> bool:
    """True when `text` uses a word Taiwan or Hong Kong writes and the mainland does not
    (部落格, 資料庫), in either script: its reader wants Taiwan's words back."""
    return bool(text) and not text.isascii() and bool(_MAINLAND_WORD.search(simplified_chars(text)))


@lru_cache(maxsize=256)  # a turn folds its history on every step: the same texts again
def question_fold(text: str) -> str:
    """A question as the search and the offline model match it: fullwidth letters and digits
    as ASCII, Traditional characters as Simplified."""
    return to_simplified(fullwidth_fold(text))


@lru_cache(maxsize=256)
def simplified_chars(text: str) -> str:
    """Every Traditional character of `text` as its Simplified one, words unchanged.

    For text that may mix both scripts (an answer whose frame was put in Traditional around
    quotes left in Simplified): character by character, Simplified text stays as it is.
    """
    return _convert(text, "t2s") if text and not text.isascii() else text


def to_traditional(text: str) -> str:
    """`text` in Traditional characters (the words stay: 博客 is not rewritten as 部落格)."""
    return _convert(text, "s2t") if text and not text.isascii() else text


# Taiwan's quotation marks: corner brackets, double ones for a quote inside a quote (OpenCC
# converts characters, not punctuation).
TAIWAN_QUOTES = str.maketrans({"“": "「", "”": "」", "‘": "『", "’": "』"})
# Where the Taiwan phrase table picks a software word for a blog's: it turns 发布 (publish an
# article) into 釋出 (release a program, or a prisoner).
TAIWAN_WORD_FIXES = {"釋出": "發布"}


def to_taiwan(text: str) -> str:
    """`text` in Traditional characters, Taiwan's words (博客 -> 部落格, 搜索 -> 搜尋) and
    quotation marks, as the Traditional catalogues are made (docent/traditional.py: OpenCC's
    s2twp). The offline model's "《X》发布于" read "釋出於" to a reader in Taiwan."""
    if not text or text.isascii():
        return text
    return taiwan_worded(_convert(text, "s2twp")).translate(TAIWAN_QUOTES)


def taiwan_worded(text: str) -> str:
    """OpenCC's Taiwan text with the blog's words where its table picks a software word."""
    for table_word, blog_word in TAIWAN_WORD_FIXES.items():
        text = text.replace(table_word, blog_word)
    return text
