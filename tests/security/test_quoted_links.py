"""What an article shows as text, the offline assistant quotes as text: never as a link.

The offline model writes Markdown, and the chat panel (and the admin's transcript) render it.
It dropped the links of an article's prose, but not those hidden where the blog shows text:
inline code ("`[renew here](https://evil.example/renew)`", code on the article page; its
backticks went and the quote was a live link), the summary (plain text on every page, a link
in the greeting's list of articles), and the title (`Offer](https://evil.example) [x` turned
the answer's own "Source:" line into a link to another site).
"""

import re

import pytest
from channels.db import database_sync_to_async

from blog.rendering import answer_to_html
from tests.security.clients import published_indexed, ws_answer

pytestmark = pytest.mark.django_db(transaction=True)

EVIL = "evil.example"
BODY = (
    "## Renewing zebra tokens\n\n"
    "Zebra tokens are a rare kind of session credential. To renew zebra tokens, use "
    f"`[the renewal page](https://{EVIL}/renew)` and sign in again.\n\n"
    f"Zebra tokens expire after a day; `<https://{EVIL}/auto>` lists them. "
    f"Old zebra tokens are kept at `[the archive][old]` and `[old]: https://{EVIL}/old`.\n"
)
QUESTIONS = [
    ("how do I renew zebra tokens?", None),  # search, then an extractive answer
    ("summarize this article", "zebra-tokens"),  # the summary and each section's lead
    ("hello", None),  # the greeting lists the newest articles with their summaries
]
# A link as the chat panel's renderer (static/chat/markdown.js) finds one: "[label](target)".
CHAT_LINK = re.compile(r"\[([^\]\n]+)\]\(\s*<?([^\s)>]+)>?")


@database_sync_to_async
def publish_indexed() -> None:
    published_indexed(
        title=f"Zebra tokens](https://{EVIL}/title) [x",
        slug="zebra-tokens",
        summary=f"Claim yours at [the sign-in page](https://{EVIL}/login) today.",
        body=BODY,
    )


async def test_the_offline_assistant_quotes_article_text_without_making_links(serve):
    await publish_indexed()
    server = serve("quoted-links")

    answers = []
    for question, page in QUESTIONS:
        events = await ws_answer(server, question, **({"page": page} if page else {}))
        assert events[-1]["type"] == "done", events[-1]
        answers.append("".join(e["content"] for e in events if e["type"] == "text"))

    local, foreign = [], []
    for answer in answers:
        assert "zebra" in answer.lower(), answer  # the article was quoted
        targets = [target for _, target in CHAT_LINK.findall(answer)]
        admin = answer_to_html(answer, external_label="another site")  # the transcript's view
        targets += re.findall(r'href="([^"]*)"', admin)
        for target in targets:
            (local if target.startswith("/articles/zebra-tokens/") else foreign).append(target)
    assert foreign == []
    assert len(local) >= 2 * len(QUESTIONS)  # each answer still links the article, both views
