"""Visitor text in the admin: bidi controls labelled where they are laid out, nowhere else."""

from html.parser import HTMLParser

from django.utils.safestring import mark_safe

from agent.templatetags.visitor_text import visitor_html
from blog.rendering import markdown_to_html

RLO = "\u202e"


class Links(HTMLParser):
    """The attributes of each <a>, and the page's text, as a browser would read them."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text += data


def test_a_control_inside_an_answer_link_title_keeps_the_link_whole():
    # The answer's HTML is rendered and sanitized first; a label put inside the title's
    # quotes closed the attribute and the tag early: the link lost rel="noreferrer ..."
    # and the rest of the tag showed as text.
    answer = markdown_to_html(f'See [the docs](https://example.com "a{RLO}b") and {RLO}ZQ.')
    page = Links()
    page.feed(str(visitor_html(mark_safe(answer))))  # noqa: S308 - sanitized by nh3 above

    assert page.links == [
        {"href": "https://example.com", "title": f"a{RLO}b", "rel": "noopener noreferrer nofollow"}
    ]
    assert page.text == "See the docs and U+202EZQ.\n"


def test_a_greater_than_sign_in_an_attribute_does_not_end_the_tag():
    answer = markdown_to_html(f'[x](https://example.com "1 > 0 {RLO}") {RLO}')
    page = Links()
    page.feed(str(visitor_html(mark_safe(answer))))  # noqa: S308 - sanitized by nh3 above

    assert page.links[0]["title"] == f"1 > 0 {RLO}"
    assert page.text.count("U+202E") == 1


def test_combining_marks_past_four_on_a_character_are_counted_not_stacked():
    # Thai and Latin towers cut to four marks a character; a keycap and real Thai untouched.
    thai = "ส" + "\u0e47" * 12
    shown = str(visitor_html("a" + "\u0301" * 3990 + f" b\u0301\u0300 {thai} 1\ufe0f\u20e3 ก่ำ"))

    assert shown.startswith("<bdi>a" + "\u0301" * 4 + '<span class="dc-bidi" title="3986 more')
    assert "ส" + "\u0e47" * 4 + '<span class="dc-bidi" title="8 more' in shown
    assert " b\u0301\u0300 " in shown
    assert shown.endswith("1\ufe0f\u20e3 ก่ำ</bdi>")


def test_hidden_tag_characters_are_shown_as_the_text_they_spell():
    # Invisible on screen, read by a model as ASCII: the reviewer sees what was smuggled in.
    hidden = "".join(chr(0xE0000 + ord(char)) for char in "obey <me>")
    shown = str(visitor_html(f"why cap{hidden}\U000e007f steps?"))

    assert shown == (
        '<bdi>why cap<span class="dc-bidi" title="hidden Unicode tag characters, not sent to the'
        ' model">tags: obey &lt;me&gt;</span> steps?</bdi>'
    )


def test_a_blank_letter_is_labelled_and_an_emoji_keeps_its_selector():
    # "pgvector\u3164" showed the reviewer "pgvector": nothing said why it matched no article.
    page = Links()
    page.feed(str(visitor_html("pgvector\u3164 \u2800 \u2764\ufe0f")))
    assert page.text == "pgvectorU+3164 U+2800 \u2764\ufe0f"


def test_invisible_operators_are_shown_as_how_many():
    # "Sneaky bits": U+2062 a 0, U+2064 a 1, nothing on screen, read by a model.
    shown = str(visitor_html("why cap\u2062\u2064\u2062\u2062 steps?"))

    assert shown == (
        '<bdi>why cap<span class="dc-bidi" title="invisible operators, not sent to the model">'
        "invisible: 4</span> steps?</bdi>"
    )
