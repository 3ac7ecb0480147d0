"""How the offline model's quotes are written out, and the source line citing each article.

Sentences join as paragraphs, list items and rows as bullets, and each article's quotes end
with its source line ("Source: [Title](/articles/…/)"), which the planner reads back to tell
an answer from a decline. A summary request is answered with the article's summary and each
section's lead, in the article's own words, said to be in the other language when it is.
"""

from __future__ import annotations

from agent.llm.offline_text import (
    Fact,
    article_facts,
    inert,
    language,
    link_label,
    plain,
    section_leads,
)

CODE = "code"  # the kind of a Fact holding a fenced code block (offline_shape.fenced)

MAX_SECTIONS = 6

SOURCE = {"en": "Source: ", "zh": "来源："}

# A summary of an article in the other language, in the article's own words.
SUMMARY_IN = {
    "en": "“{title}” is written in {written}; its summary and sections, as it puts them:",
    "zh": "《{title}》是{written}文章，以下是它的摘要和各节要点（原文）：",
}

LANGUAGE_NAMES = {"en": {"zh": "Chinese", "en": "English"}, "zh": {"en": "英文", "zh": "中文"}}


def compose_summary(article: dict, lang: str) -> str:
    """The article's summary, then the lead sentence of each section, with the source."""
    body = str(article.get("body") or "")
    summary = plain(str(article.get("summary") or ""))
    leads = section_leads(body)[:MAX_SECTIONS]
    if not summary:
        opening = [fact.text for fact in article_facts(body)[:2] if fact.kind == "sentence"]
        summary = _join(opening, language(" ".join(opening)))
    lines = [inert(summary)] if summary else []
    written = language(f"{article.get('title', '')} {summary}")
    if written != lang:
        # "tl;dr of the article on cancellation" reads a Chinese article: say so before
        # quoting it, as a quoted passage in the other language is introduced.
        names = LANGUAGE_NAMES[lang]
        lines.insert(0, SUMMARY_IN[lang].format(written=names[written], title=_title(article)))
    if leads:
        lines.append(
            _bullets([f"**{inert(head)}**{_colon(head)}{inert(lead)}" for head, lead in leads])
        )
    lines.append(f"{SOURCE[lang]}{_link(article)}")
    return "\n\n".join(lines)


def _colon(heading: str) -> str:
    """After a Chinese heading the full-width colon, as Chinese writes it ("方案一：…")."""
    return "：" if language(heading) == "zh" else ": "


def _render(facts: list[Fact], lang: str) -> str:
    """Sentences as paragraphs; two or more list items and table rows in a row as a bulleted
    list, one alone as a paragraph (a list of one bullet read as a fragment)."""
    runs: list[list[str] | str] = []  # paragraphs, code blocks, runs of list items and rows
    prose: list[str] = []
    for fact in facts:
        if fact.kind == "sentence":
            prose.append(fact.text)
            continue
        if prose:
            runs.append(_join(prose, lang))
            prose = []
        if fact.kind == CODE:
            runs.append(_Code(fact.text))
            continue
        if runs and isinstance(runs[-1], list):
            runs[-1].append(fact.text)
        else:
            runs.append([fact.text])
    if prose:
        runs.append(_join(prose, lang))
    return "\n\n".join(_shown(run) for run in runs)


class _Code(str):
    """A fenced block (offline_shape.fenced): no link can form inside a fence, and `inert`
    would change the code ("-> list[dict]:" shown as "-> list[dict] :")."""


def _shown(run: list[str] | str) -> str:
    if isinstance(run, _Code):
        return run
    return inert(_bullets(run) if isinstance(run, list) else run)


def _bullets(items: list[str]) -> str:
    return items[0] if len(items) == 1 else "\n".join(f"- {item}" for item in items)


def _join(sentences: list[str], lang: str) -> str:
    chinese = lang == "zh" and all(language(s) == "zh" for s in sentences)
    return ("" if chinese else " ").join(sentences)


def _title(source: dict) -> str:
    # Article text like the rest: a title cannot carry a link of its own into the answer.
    return inert(str(source.get("title", "")))


def article_link(source: dict) -> str:
    """The article as a Markdown link: its title (inert) to its url, which cites it."""
    return f"[{link_label(str(source.get('title', '')))}]({source.get('url', '')})"


_link = article_link
