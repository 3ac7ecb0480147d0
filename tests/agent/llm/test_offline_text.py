"""Matching terms of the offline model: what a question and a fact have in common."""

from agent.llm.offline_text import article_facts, article_pointers, plain, terms


def test_contractions_carry_no_topic_and_a_possessive_keeps_its_noun():
    assert terms("Why can't PostgreSQL's parser split it? They’re sure it isn't") == {
        "postgresql",
        "parser",
        "split",
        "sure",
    }


def test_a_hyphenated_word_is_also_its_parts_and_daily_counts_by_day():
    # "how many tokens does a session get per day?" shared only "token" with the fact that
    # answers it, and a weaker fact naming "day" was quoted instead.
    fact = terms("Per-session daily budget: 40,000 tokens.")

    assert {"per-session", "session", "day", "token"} <= fact
    assert {"session", "day", "token"} <= terms("How many tokens does a session get per day?")


def test_a_phrasal_verb_s_particle_is_not_a_topic():
    # "before it's cut off" matched "Clients … back off instead of hammering the endpoint".
    assert terms("before it's cut off") == {"before", "cut"}
    assert not terms("back off") & terms("cut off")


def test_a_verb_and_its_particle_are_the_noun_the_blog_writes():
    # "How do I back up the PostgreSQL database?" quoted "…will fall back to a full scan"
    # after the sentence about backups, on the word "back".
    assert terms("How do I back up the PostgreSQL database?") == {
        "backup",
        "postgresql",
        "database",
    }
    assert not terms("back up") & terms("Sorting by it instead will fall back to a full scan.")
    assert "backup" in terms("the same backups as the articles")
    # Every spelling of the verb, and the noun's own spelling, meet.
    assert terms("the call timed out") & terms("Wrap sends in a timeout") == {"timeout"}
    assert {"fallback"} <= terms("when it falls back") & terms("a fallback answer")
    # A pair that names nothing stays two words: "come back in a minute" is no login.
    assert {"back", "come"} <= terms("come back in a minute")


def test_how_a_question_is_framed_is_not_what_it_is_about():
    # "Streaming is the difference, and it is mostly plumbing." answered "what's the
    # difference between SSE and WebSockets?" on the word "difference" alone.
    assert terms("What's the difference between SSE and WebSockets?") == {"sse", "websocket"}


def test_a_letter_on_its_own_names_a_parameter():
    # "常数 k 一般取多少" quoted RRF's formula blind: "k" was no term, so the sentence giving
    # "k = 60" shared no word with the question. "a", "i" and what contractions leave are not.
    assert {"k", "m"} <= terms("倒数排名融合的常数 k 和 HNSW 的 m 是什么？")
    assert terms("I'm sure it's a test, e.g. this one, i.e. that one") == {"sure", "test"}


def test_instead_and_er_bu_shi_frame_a_comparison_and_are_not_matched():
    # "Ask instead …" opened the answer to "why use RRF instead of adding the scores?", and
    # "…而不是监视读者" followed the right sentence for "为什么要用 p95 而不是平均值？".
    assert "instead" not in terms("Why use RRF instead of adding the scores?")
    assert not {"而不", "不是"} & terms("为什么要用 p95 而不是平均值？")


def test_inline_code_keeps_its_text_even_when_it_looks_like_a_tag():
    # pgvector's operators were read as HTML tags and dropped: the table row that answers
    # "which operator computes the negative inner product?" lost the operator itself.
    body = (
        "| Operator | Meaning |\n| --- | --- |\n| `<#>` | Negative inner product |\n\n"
        "Call `__init__` with <b>care</b> when 3 < 4 and 5 > 2.\n"
    )

    row, sentence = (fact.text for fact in article_facts(body))

    assert row == "Operator: <#> — Meaning: Negative inner product"
    assert sentence == "Call __init__ with care when 3 < 4 and 5 > 2."


def test_markdown_marks_around_code_still_go():
    assert (
        plain("See [`asyncio.shield`](/x/) and **bold `x`**.") == "See asyncio.shield and bold x."
    )


def test_a_number_word_is_its_digits_but_one_is_not_a_count():
    found = terms("after ten calls, twenty rows and one of them")
    assert found == {"after", "10", "call", "20", "rows"}
    assert terms("10,500 tokens, then 1,000,000") == {"10500", "token", "1000000"}


def test_link_reference_definitions_are_not_quoted_as_text():
    # "[a]: https://…" is where a reference link points; the article page shows nothing for
    # it, but the offline model quoted "[a]: https://example.com/x" to the visitor as a fact.
    body = (
        "## Sources\n\n"
        "[a]: https://example.com/x\n"
        '  [Second Ref]:  <https://example.com/y> "A title"\n'
        "Tokens are renewed daily by the [scheduler][a] on every node.\n\n"
        "> [quoted]: https://example.com/q\n\n"
        "- [item]: https://example.com/i\n"
        "- Old tokens are archived after thirty days in cold storage.\n\n"
        "[c]:\n"
        "    https://example.com/c\n\n"
        "The schedule is fixed, as [the docs][b] say.\n"
        "[b]: https://example.com/b\n\n"
        "[d]: https://example.com/d\n"
        '"a title on its own line"\n'
    )
    texts = [fact.text for fact in article_facts(body)]

    assert texts == [
        "Tokens are renewed daily by the [scheduler][a] on every node.",
        "Old tokens are archived after thirty days in cold storage.",
        # A definition cannot interrupt a paragraph: CommonMark shows this line as text.
        "The schedule is fixed, as [the docs][b] say. [b]: https://example.com/b",
    ]


def test_a_table_whose_delimiter_row_has_one_dash_per_cell_is_read_as_rows():
    # GFM needs one dash per cell; the index spells such a table out (blog.chunking), and the
    # offline model had read its delimiter row "|-|-|" as a row of data.
    facts = article_facts("| Key | Allowance |\n|-|:-:|\n| request | 2,000 chars |\n")

    assert [(fact.kind, fact.text) for fact in facts] == [
        ("row", "Key: request — Allowance: 2,000 chars")
    ]


def test_a_rows_first_cell_is_named_by_its_header_as_the_others_are():
    # "Condition Model call budget exhausted (5 calls) — Status recorded: step_limit" was the
    # walk's answer to "为什么要限制智能体的步数？": header and cell run together as one phrase.
    english = article_facts(
        "| Condition | Status recorded |\n| --- | --- |\n"
        "| Model call budget exhausted (5 calls) | `step_limit` |\n"
    )
    chinese = article_facts("| 项目 | 上限 | 说明 |\n|-|-|-|\n| 模型调用 | 6 次 | 每轮 |\n")

    assert [fact.text for fact in english] == [
        "Condition: Model call budget exhausted (5 calls) — Status recorded: step_limit"
    ]
    assert [fact.text for fact in chinese] == ["项目：模型调用 — 上限：6 次；说明：每轮"]


def test_a_plural_in_ings_meets_its_singular():
    # "How do text embeddings work?" kept "embedding" while the glossary's "embedding" and the
    # articles' "An embedding is…" became "embedd": the plural met neither.
    assert terms("embeddings") == terms("embedding") == terms("embedded")
    assert terms("settings") == terms("setting")
    assert terms("strings") == terms("string") == {"string"}


def test_article_pointers_are_the_names_of_other_articles_linked_outside_code():
    body = (
        "See [Why step limits matter](/articles/why-step-limits-matter/) and "
        "[**取消与超时**](/articles/cancel-zh/#取消).\n\n"
        "Back to [the top](/articles/budgets/). The format is `[Title](/articles/slug/)`.\n\n"
        "An [outside page](https://example.com/articles/x/) is no article of the blog."
    )

    assert article_pointers(body, "/articles/budgets/") == {"Why step limits matter", "取消与超时"}
