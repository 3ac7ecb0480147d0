from blog.rendering import (
    TooDeep,
    answer_to_html,
    heading_anchor,
    markdown_to_html,
    markdown_to_text,
    markdown_too_deep,
)


def test_script_tags_do_not_survive():
    html = markdown_to_html("Hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>")

    assert "<script" not in html
    assert "onerror" not in html.replace("onerror=alert(1)&gt;", "")
    assert "<img" not in html


def test_javascript_links_are_dropped():
    html = markdown_to_html("[click](javascript:alert(1))")

    assert 'href="javascript' not in html


def test_links_get_safe_rel_and_code_keeps_its_class():
    html = markdown_to_html("[site](https://example.com)\n\n```python\nx = 1\n```")

    assert 'rel="noopener noreferrer nofollow"' in html
    assert '<code class="language-python">' in html


def test_tables_and_chinese_text_render():
    html = markdown_to_html("| 列 | 值 |\n|---|---|\n| 向量 | 384 |\n")

    assert "<table>" in html and "<td>向量</td>" in html


def test_plain_text_strips_markup():
    assert markdown_to_text("## Title\n\nSome **bold**.") == "Title\nSome bold."


def test_headings_get_stable_prefixed_ids_unique_per_page():
    html = markdown_to_html("## Setup\n\n## Content\n\n### 向量 索引\n\n## Setup")

    assert '<h2 id="sec-setup">' in html
    assert '<h2 id="sec-content">' in html  # never the page's own id="content"
    assert '<h3 id="sec-向量-索引">' in html
    assert '<h2 id="sec-setup-2">' in html
    assert heading_anchor("Why `steps` matter") == "sec-why-steps-matter"


# Ten lists inside one another, then the rest of an article: markdown-it's nesting limit
# (maxNesting 20; a list takes two levels) dropped the tenth list and every line after it.
DEEP_LIST = "\n".join("  " * depth + f"- step {depth + 1}" for depth in range(11))
NINE_DEEP = "\n".join("  " * depth + f"- step {depth + 1}" for depth in range(9))
DEEP_ARTICLE = f"# Setup\n\nFirst this.\n\n{DEEP_LIST}\n\nThen the **end**.\n\n## Later\n\nMore."


def test_a_list_nested_past_the_renderer_s_depth_keeps_the_rest_of_the_article():
    html = markdown_to_html(DEEP_ARTICLE)

    assert html.count("<ul>") == 9  # as deep as the page shows lists
    assert "step 9\n- step 10\n- step 11</li>" in html  # deeper: the lines, as text
    assert "<p>Then the <strong>end</strong>.</p>" in html
    assert '<h2 id="sec-later">Later</h2>\n<p>More.</p>' in html
    # A sibling of the ninth list's item is still an item, not the tail of its paragraph.
    sibling = markdown_to_html(NINE_DEEP + "\n" + "  " * 8 + "- step 9b")
    assert "<li>step 9</li>\n<li>step 9b</li>" in sibling


def test_a_quote_nested_past_the_renderer_s_depth_keeps_its_words_and_what_follows():
    html = markdown_to_html("Before.\n\n" + ">" * 25 + " Deep words.\n\nAfter.")

    assert html.count("<blockquote>") == 19
    assert "<p>&gt;&gt;&gt;&gt;&gt;&gt; Deep words.</p>" in html
    assert html.endswith("<p>After.</p>\n")


def test_an_answer_nested_too_deep_keeps_its_text_in_the_transcript():
    html = answer_to_html(DEEP_ARTICLE, external_label="leaves")

    assert "step 11" in html and "<h2" in html and "More." in html


def test_the_first_line_nested_too_deep_is_named_with_its_words():
    ordered = "\n".join("   " * depth + "1. " + "word " * depth for depth in range(12))
    quotes = "> " * 20 + "deep"

    assert markdown_too_deep(DEEP_ARTICLE) == TooDeep(line=14, text="- step 10")
    assert markdown_too_deep(DEEP_ARTICLE.replace("\n", "\r\n")) == TooDeep(14, "- step 10")
    assert markdown_too_deep(ordered) == TooDeep(10, "1. word word word word word word word w…")
    assert markdown_too_deep(quotes) == TooDeep(line=1, text=quotes[:39] + "…")
    assert markdown_too_deep(DEEP_ARTICLE.replace(DEEP_LIST, NINE_DEEP)) is None


def test_a_table_column_keeps_the_alignment_its_markdown_asks_for():
    # markdown-it writes it as style="text-align:right", which the sanitiser dropped: the
    # figures of a "|---:|" column read left-aligned on the page and in the preview.
    html = markdown_to_html("| Name | Default | Note |\n|:--|--:|:-:|\n| `m` | 16 | links |")

    assert '<th align="left">Name</th>\n<th align="right">Default</th>' in html
    assert '<td align="right">16</td>\n<td align="center">links</td>' in html
    assert "style" not in html
    assert "<td>4</td>" in markdown_to_html("| a |\n|---|\n| 4 |")  # no alignment asked: none


def test_an_image_is_a_link_to_the_picture_named_by_its_description():
    # The sanitiser keeps no <img>: `![A diagram](…)` vanished with its words, leaving "<p></p>"
    # on the page and in the author's preview.
    html = markdown_to_html(
        'Before.\n\n![A diagram of *the* bucket](https://example.com/b.png "Bucket")'
    )

    assert "<p></p>" not in html and "<img" not in html
    assert (
        '<a href="https://example.com/b.png" title="Bucket" rel="noopener noreferrer nofollow">'
        "A diagram of <em>the</em> bucket</a>"
    ) in html


def test_an_image_without_a_description_is_named_by_its_file():
    assert '<a href="/static/chart.png" rel="noopener noreferrer nofollow">chart.png</a>' in (
        markdown_to_html("![](/static/chart.png)")
    )


def test_an_image_with_no_usable_name_is_no_wall_of_text_and_no_empty_link():
    payload = "iVBORw0KGgo" * 300
    data = markdown_to_html(f"![](data:image/png;base64,{payload})")
    spaces = markdown_to_html("![   ](/static/chart.png)")
    long = markdown_to_html(f"![](https://example.com/{'a' * 500}.png)")
    empty = markdown_to_html("Before ![]() after.")
    nowhere = markdown_to_html("![A diagram]()")

    assert payload[:40] not in data and ">image</a>" in data  # the base64 was the link's name
    assert ">chart.png</a>" in spaces  # a near-invisible link of three spaces before
    assert f">{'a' * 60}…</a>" in long
    assert "<a" not in empty and "Before" in empty and "after." in empty  # was <a href="">
    assert "<a" not in nowhere and "A diagram" in nowhere  # its words, no link to nowhere


def test_an_image_inside_a_link_leaves_its_description_in_that_link():
    html = markdown_to_html("[![Logo](/static/logo.png)](https://example.com/)")

    assert html.count("<a ") == 1
    assert ">Logo</a>" in html and "logo.png" not in html


def test_an_image_in_an_answer_is_a_link_marked_as_leaving_the_site():
    html = answer_to_html(
        "See ![the chart](https://example.com/c.png).", external_label="elsewhere"
    )

    assert 'href="https://example.com/c.png"' in html and ">the chart</a>" in html
    assert 'title="example.com (elsewhere)"' in html
