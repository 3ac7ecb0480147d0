from blog.chunking import (
    embedding_text,
    file_extensions,
    lexical_text,
    link_targets_drop,
    markdown_chunk,
    query_terms,
    token_count,
    vector_text,
)


def words(n: int, word: str = "word") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def test_a_latin_word_and_a_cjk_character_each_count_one_token():
    assert token_count("Hybrid search, with RRF!") == 4
    assert token_count("向量检索") == 4
    assert token_count("用 pgvector 建索引") == 5
    assert token_count("ef_search") == 2


def test_chunks_keep_their_heading_path_and_never_cross_a_heading():
    body = (
        "Intro paragraph.\n\n"
        "## Why step limits matter\n\nFirst section.\n\n"
        "### How loops run away\n\nNested section.\n\n"
        "## Another\n\nLast section.\n"
    )

    chunks = markdown_chunk(body=body)

    assert [(c.heading_path, c.text) for c in chunks] == [
        ("", "Intro paragraph."),
        ("Why step limits matter", "First section."),
        ("Why step limits matter > How loops run away", "Nested section."),
        ("Another", "Last section."),
    ]
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3]


def test_paragraphs_are_packed_up_to_the_target_with_sentence_overlap():
    paragraphs = [f"{words(20, f'p{n}w')}. Tail sentence {n} here." for n in range(6)]

    chunks = markdown_chunk(body="\n\n".join(paragraphs), target=60, overlap=5)

    assert len(chunks) > 1
    assert all(token_count(chunk.text) <= 60 for chunk in chunks)
    for previous, following in zip(chunks, chunks[1:], strict=False):
        last_sentence = previous.text.rsplit(". ", 1)[-1]
        assert following.text.startswith(last_sentence)
    # Every paragraph made it into some chunk.
    assert all(any(p in chunk.text for chunk in chunks) for p in paragraphs)


def test_chinese_text_is_measured_by_characters_and_split_at_full_stops():
    sentence = "向量检索把文章切成小段再计算嵌入。"  # 16 characters + a full stop
    body = sentence * 30

    chunks = markdown_chunk(body=body, target=100, overlap=20)

    assert len(chunks) >= 5
    assert all(token_count(chunk.text) <= 100 for chunk in chunks)
    assert all(chunk.text.endswith("。") for chunk in chunks)
    assert chunks[1].text.startswith(sentence)  # the overlap repeats whole sentences


def test_a_fenced_code_block_stays_whole_even_with_blank_lines():
    code = "```python\ndef f():\n\n    return 1\n\n# done\n```"
    body = f"{words(40)}\n\n{code}\n\n{words(40, 'after')}"

    chunks = markdown_chunk(body=body, target=50, overlap=0)

    assert any(code in chunk.text for chunk in chunks)
    assert not any("```" in chunk.text and code not in chunk.text for chunk in chunks)


def test_a_code_block_too_big_for_one_chunk_is_split_into_fenced_pieces():
    lines = "\n".join(f"x{i} = {i}" for i in range(60))
    chunks = markdown_chunk(body=f"```\n{lines}\n```", target=40, overlap=10)

    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.text.startswith("```\n") and chunk.text.endswith("\n```")


def test_headings_inside_code_blocks_are_not_headings():
    body = "## Real\n\n```sh\n# just a shell comment\necho hi\n```\n"

    chunks = markdown_chunk(body=body)

    assert [c.heading_path for c in chunks] == ["Real"]


def test_a_very_long_sentence_is_cut_by_tokens():
    chunks = markdown_chunk(body=words(250), target=100, overlap=0)

    assert [token_count(c.text) for c in chunks] == [100, 100, 50]


def test_embedding_text_leads_with_title_and_heading_path():
    text = embedding_text(title="Step limits", heading_path="Why > How", text="Body.")

    assert text == "Step limits > Why > How\n\nBody."
    assert embedding_text(title="T", heading_path="", text="B") == "T\n\nB"


def test_link_targets_stay_out_of_the_embedded_and_indexed_text():
    body = (
        "Covered in [取消与超时](/articles/cancellation-and-timeouts-zh/), see "
        '![the loop](/static/loop.png "Loop") and [the spec](https://example.com/spec).'
    )

    text = embedding_text(title="T", heading_path="", text=body)

    assert text == "T\n\nCovered in 取消与超时, see the loop and the spec."
    assert "articles" not in lexical_text(text) and "example" not in lexical_text(text)
    assert link_targets_drop("a [b] (c) and [d]") == "a [b] (c) and [d]"  # not links


def test_a_link_whose_address_holds_parentheses_loses_all_of_it():
    # CommonMark allows balanced parentheses in a target (Wikipedia's addresses): the target
    # was cut at the first ")", leaving "_(cs))" in the text, and a single-quoted title kept
    # the whole link.
    wiki = "See [HNSW](https://en.wikipedia.org/wiki/HNSW_(algorithm)) here."
    titled = "See [HNSW](/articles/hnsw/ 'the article') here."

    assert link_targets_drop(wiki) == "See HNSW here."
    assert link_targets_drop(titled) == "See HNSW here."


def test_vector_text_spells_out_table_rows_with_their_column_names():
    text = "Limits:\n\n| Key | Allowance |\n|:---|---:|\n| request | 2,000 chars |\n\nAfter."

    assert vector_text(text) == "Limits:\n\nKey: request; Allowance: 2,000 chars.\n\nAfter."
    assert vector_text("a | b is not a table") == "a | b is not a table"


def test_vector_text_leaves_code_alone_and_knows_a_short_delimiter_row():
    # A fenced block showing a table is code: its first line vanished as a "header" and the rest
    # was rewritten. GFM's delimiter row needs one dash, not three: "|:-:|-|" became a row.
    code = "Output:\n\n```\n| id | name |\n| 1  | ann  |\n```"
    short = "| Key | Allowance |\n|:-:|-|\n| request | 2,000 chars |"

    assert vector_text(code) == code
    assert vector_text(short) == "Key: request; Allowance: 2,000 chars."


def test_lexical_text_spells_chinese_as_bigrams_and_splits_glued_latin_words():
    assert lexical_text("使用pgvector建索引") == " 使用 pgvector 建索 索引 "
    assert lexical_text("召回率 recall") == " 召回 回率  recall"


def test_query_terms_drop_question_particles_but_keep_topical_bigrams():
    terms = query_terms("为什么 HNSW 的召回率会下降？")

    assert "hnsw" in terms and "召回" in terms and "回率" in terms
    assert "什么" not in terms and "为什" not in terms
    assert query_terms("什么") == ["什么"]  # nothing topical left: keep what there is


def test_query_terms_drop_the_words_a_chinese_reader_asks_with():
    # "请问" (may I ask) and "介绍一下" (introduce) name no topic; searched as terms the blog never
    # writes, they sank "请问 HNSW 是什么？" under the relevance bar.
    assert query_terms("请问 HNSW 是什么？") == ["hnsw"]
    assert query_terms("能不能简单介绍一下 RRF") == ["rrf", "简单"]
    assert query_terms("帮我讲讲限流") == ["限流"]


def test_query_terms_drop_asking_what_a_thing_is_for():
    # "幂等键有什么作用？" weighed 作用 ("use"), which the article on idempotency keys never
    # writes, and the boundary bigram 键有: under the bar at 0.21, though the article is titled
    # after it (0.97 now).
    assert query_terms("幂等键有什么作用？") == ["幂等", "等键"]
    assert query_terms("幂等键有什么用？") == ["幂等", "等键"]
    assert query_terms("zhparser 是用来干什么的？") == ["zhparser"]
    assert query_terms("RRF 的作用是什么") == ["rrf"]
    assert query_terms("Retry-After 头是做什么的") == ["retry", "after"]  # no lone 头
    assert "作用" in query_terms("工具调用对模型有哪些副作用")  # a side effect is a topic


def test_query_terms_drop_contractions_the_blog_never_spells():
    # "isn't" read as "isn" + "t" made a reader's question look off-topic to the relevance bar.
    assert query_terms("Why isn't the agent's stream working? I can't tell") == [
        "why",
        "the",
        "agent",
        "stream",
        "working",
        "i",
    ]
    assert query_terms("whats HNSW, dont they’re sure") == ["hnsw", "sure"]


def test_the_extension_of_a_file_name_the_blog_writes_is_no_term_of_the_question():
    written = {"asgi.py": 1, "config/asgi.py": 1, "asgi": 8}

    # The index keeps "asgi.py" whole; query_terms cuts off "py", a word no chunk holds.
    assert file_extensions("Why does asgi.py fail? And my Asgi.PY.", written) == {"py"}
    assert file_extensions("Errors from asgi.py. What order?", written) == {"py"}
    # A file the blog never writes is a name it does not know, extension and all.
    assert file_extensions("my settings.py has DEBUG on", written) == set()
    assert file_extensions("what is asgi.pyc or asgi.py2?", written) == set()


def test_chunks_keep_a_list_nested_deeper_than_the_page_shows():
    # Chunks are cut from the Markdown's lines, not from markdown-it's tokens: the text its
    # nesting limit once dropped from the page was still indexed (blog.rendering._within_depth).
    ladder = "\n".join("  " * depth + f"- rung{depth}" for depth in range(12))
    text = "\n\n".join(d.text for d in markdown_chunk(body=f"{ladder}\n\n## After\n\nThe end."))

    assert "rung11" in text and "The end." in text
