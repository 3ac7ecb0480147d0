from blog.rendering import heading_anchor, markdown_to_html, markdown_to_text


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
