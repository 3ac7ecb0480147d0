"""The errors a turn and its tool calls store, in the reviewer's language.

The loop is framework-free and writes them in English: what the model was told ("Error:
unknown tool …"), why a call never ran, the message the visitor's panel replaced with its own.
The Chinese admin showed them in English beside its Chinese labels. Each known text is matched
here and said again through gettext; an unknown one (an exception's own words) stays as stored.
tests/agent/admin/test_fifth_walk.py makes each of them through the code that writes it.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _  # marked here, translated when shown

# (pattern of the stored text, its reviewer's text): the pattern's named groups fill the text.
_TEXTS: list[tuple[str, str]] = [
    # Tool calls (agent.loop, agent.tools).
    (r"Not executed: the step limit was reached\.", _("Not executed: the step limit was reached.")),
    (
        r"Not executed: more than (?P<cap>\d+) calls in one step\.",
        _("Not executed: more than %(cap)s tool calls in one step."),
    ),
    (
        r'Error: unknown tool "(?P<name>.*)"\. Available tools: (?P<tools>.*)\.',
        _("Unknown tool “%(name)s”. Available tools: %(tools)s."),
    ),
    (
        r"Error: arguments for (?P<name>\S+) are not a JSON object: .*",
        _("The arguments for %(name)s are not a JSON object."),
    ),
    (
        # The first field named (the validator's English words are in the result).
        r"Error: invalid arguments for (?P<name>\S+): (?P<fields>[^:]+): .*",
        _("Invalid arguments for %(name)s (%(fields)s); the result shows what the model was told."),
    ),
    (
        r"Error: (?P<name>\S+) timed out after (?P<seconds>[\d.]+)s\.",
        _("%(name)s timed out after %(seconds)s s."),
    ),
    (
        r"Error: no published article has article_id (?P<id>-?\d+)\..*",
        _("No published article has article_id %(id)s."),
    ),
    (
        r"Error: too many searches for this visitor right now \(retry in (?P<seconds>\S+) s\)\..*",
        _("Too many searches for this visitor at that moment (retry in %(seconds)s s)."),
    ),
    # Turns (agent.loop; the model adapter's messages, agent.llm.openai_compat).
    (
        r"I reached the limit of (?P<steps>\d+) steps before finishing the answer\..*",
        _("The step limit (%(steps)s model calls) was reached before the answer was finished."),
    ),
    (
        r"Step limit reached; answered without the last tool calls\.",
        _("Step limit reached; answered without the last tool calls."),
    ),
    (
        r"This answer reached its token budget before it was finished\..*",
        _("The answer reached its token budget before it was finished."),
    ),
    # A day's budget that cut the answer (agent.ratelimit's refusals, agent.ratelimit.DAY_BUDGETS).
    (
        r"The assistant has used today’s budget\..*",
        _("The site’s budget for the day was spent before the answer was finished."),
    ),
    (
        r"You have used today’s budget\..*",
        _("The visitor’s budget for the day was spent before the answer was finished."),
    ),
    (
        r"Your network has used today’s budget\..*",
        _("The visitor’s network’s budget for the day was spent before the answer was finished."),
    ),
    (
        r"Something went wrong while answering\. Please try again\.",
        _("Something went wrong while answering."),
    ),
    (r"The language model timed out\..*", _("The language model timed out.")),
    (
        r"The language model could not be reached\..*",
        _("The language model could not be reached."),
    ),
    (
        r"The language model is busy \(rate limited\)\..*",
        _("The language model was busy (rate limited)."),
    ),
    (
        r"The language model rejected this site’s credentials\.",
        _("The language model rejected this site’s credentials."),
    ),
    (
        r"The language model returned an error \(HTTP (?P<status>\d+)\)\.",
        _("The language model returned an error (HTTP %(status)s)."),
    ),
    (
        r"The language model returned an invalid response\.",
        _("The language model returned an invalid response."),
    ),
    (
        r"The language model reported an error while answering\.",
        _("The language model reported an error while answering."),
    ),
    (r"The language model’s answer broke off\..*", _("The language model’s answer broke off.")),
    (
        r"The model ended its response without a result\.",
        _("The model ended its response without a result."),
    ),
    (r"The model failed\.", _("The model failed.")),
]
_COMPILED = [(re.compile(pattern, re.DOTALL), text) for pattern, text in _TEXTS]


def error_text(*, stored: str) -> str:
    """The stored error `stored` in the active language; as stored when it is not ours."""
    for pattern, text in _COMPILED:
        match = pattern.fullmatch(stored.strip())
        if match:
            return gettext(text) % match.groupdict()
    return stored
