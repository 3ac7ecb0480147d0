"""The chat panel's strings and settings, in the visitor's language, for every page."""

from functools import cache

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from agent import events
from agent.runner import offline_mode
from blog.selectors import article_index_counts

INDEXING_ONE = (
    "Indexing is still running: %(count)s article isn’t searchable yet, "
    "so answers come from what is indexed so far."
)
INDEXING_OTHER = (
    "Indexing is still running: %(count)s articles aren’t searchable yet, "
    "so answers come from what is indexed so far."
)
# A first run: nothing is indexed yet, so "answers come from what is indexed so far" promised
# answers from nothing, and every question was declined.
INDEXING_NONE = (
    "Indexing is still running: no article is searchable yet, so questions can’t be answered "
    "until the first one is. This takes a minute or two on a first run."
)


def chat(request: HttpRequest) -> dict:
    """Context for templates/chat/_panel.html; strings and config reach the JS via json_script."""
    return {
        "chat_strings": chat_strings(),
        "chat_config": chat_config(),
        "chat_offline": offline_mode(),
        # A callable: the template counts only where the panel is shown (not in the admin).
        "chat_indexing_notice": indexing_notice,
        "chat_modules": chat_modules(),
    }


@cache
def chat_modules() -> list[str]:
    """The URLs panel.js imports, for <link rel="modulepreload"> (templates/base.html).

    Each module is found only once its importer has arrived: panel.js, then turn.js, then
    markdown.js, then inline.js, four round trips on a slow link (2 s apiece on slow 3G).
    Unhashed URLs, as the imports name them (`./turn.js`): with ManifestStaticFilesStorage the
    hashed panel.js still imports those, so a hashed preload would be a second download.
    """
    folder = settings.BASE_DIR / "static" / "chat"
    names = sorted(path.name for path in folder.glob("*.js") if path.name != "panel.js")
    return [f"{settings.STATIC_URL}chat/{name}" for name in names]


def indexing_notice() -> str:
    """The notice while published articles wait to be indexed ("" once none do); the panel's
    script counts it down with the same strings (`indexing_none`, `indexing_one`, `_other`)."""
    count, searchable = article_index_counts()
    if not count:
        return ""
    if not searchable:
        return _(INDEXING_NONE)
    return ngettext(INDEXING_ONE, INDEXING_OTHER, count) % {"count": count}


def chat_config() -> dict:
    """Protocol facts the panel shares with the server, from where the server keeps them."""
    return {
        "codes": sorted(events.ERROR_CODES),
        "retryable": sorted(events.RETRYABLE),
        "maxChars": settings.AGENT_MAX_MESSAGE_CHARS,
        # Where a reader goes when the assistant cannot answer (the search page needs no model).
        "searchUrl": reverse("blog:search"),
    }


def chat_strings() -> dict[str, str]:
    """Every string chat.js shows, translated; `%(name)s` placeholders are filled in by chat.js."""
    # Only English and Chinese are offered (LANGUAGES), so "one" and "other" cover the plurals.
    return {
        "thinking": _("Thinking…"),
        # After a long silence in a turn (static/chat/panel.js, SLOW_MS).
        "still_waiting": _(
            "Still waiting for the answer: the assistant is slow right now. "
            "You can keep waiting or press Stop."
        ),
        "sources": _("Sources"),
        "steps": _("What I looked up"),
        # With its colon: Chinese writes a full-width one ("你的问题：").
        "you_asked": _("You asked:"),
        "no_answer": _("(no answer)"),
        "external_link": _("opens another site"),
        # A restored source whose article has been unpublished since (shown as text).
        "source_gone": _("(no longer available)"),
        "placeholder": _("Ask a question…"),
        "placeholder_article": _("Ask about this article…"),
        "suggest_article": _("Summarize this article"),
        "suggest_new": _("What’s new on the blog?"),
        "suggest_topics": _("What topics does this blog cover?"),
        "suggest_section": _("What does the article say about “%(heading)s”?"),
        # Copy buttons, the length counter, visitor feedback.
        "copy": _("Copy"),
        # Read by screen readers: a list of buttons read "Copy, Copy, Copy" for three answers.
        "copy_answer": _("Copy the answer"),
        "copy_code": _("Copy the code"),
        "copied": _("Copied"),
        "copy_failed": _("Couldn’t copy"),
        "chars_left": _("%(count)s / %(max)s characters"),
        # Literals in each call, so that makemessages finds them.
        "too_long_one": ngettext(
            "Too long by %(over)s character (the limit is %(max)s). Shorten it to send.",
            "Too long by %(over)s characters (the limit is %(max)s). Shorten it to send.",
            1,
        ),
        "too_long_other": ngettext(
            "Too long by %(over)s character (the limit is %(max)s). Shorten it to send.",
            "Too long by %(over)s characters (the limit is %(max)s). Shorten it to send.",
            2,
        ),
        "feedback_label": _("Was this answer helpful?"),
        "feedback_up": _("Helpful"),
        "feedback_down": _("Not helpful"),
        "feedback_comment": _("What was right or wrong? (optional)"),
        "feedback_send": _("Send"),
        "feedback_sending": _("Saving…"),
        "feedback_thanks": _("Thanks for the feedback."),
        "feedback_failed": _("Your feedback couldn’t be saved. Try again."),
        "feedback_your_comment": _("Your comment: “%(comment)s”"),
        "feedback_edit": pgettext("change a saved feedback comment", "Edit"),
        "ask_again": _("Ask again"),
        "declined_while_indexing": _(
            "Some articles aren’t searchable yet, so the answer may be in one of them. "
            "Ask again in a minute."
        ),
        "ask_in_new_chat": _("Ask in a new chat"),
        # Tool steps: running, then done (or failed).
        "search_running": _("Searching the blog for “%(query)s”…"),
        "search_done": _("Searched for “%(query)s”"),
        "detail_running": _("Reading the article…"),
        "detail_done": _("Read “%(title)s”"),
        "detail_done_unknown": _("Read an article"),
        "list_running": _("Listing the newest articles…"),
        "list_done": _("Listed the newest articles"),
        "list_tag_running": _("Listing articles tagged “%(tag)s”…"),
        "list_tag_done": _("Listed articles tagged “%(tag)s”"),
        "tool_running": _("Using %(name)s…"),
        "tool_done": _("Used %(name)s"),
        # A step that failed: "Listed the newest articles · invalid arguments" read as done.
        "search_failed": _("Couldn’t search for “%(query)s”"),
        "detail_failed": _("Couldn’t read the article"),
        "list_failed": _("Couldn’t list the newest articles"),
        "list_tag_failed": _("Couldn’t list articles tagged “%(tag)s”"),
        "tool_failed": _("Couldn’t use %(name)s"),
        "tool_skipped": _("not run: step limit reached"),
        "tool_stopped": pgettext("a tool step cut off as it ran", "stopped"),
        "ms": _("%(ms)s ms"),
        "seconds_short": _("%(seconds)s s"),
        "results_one": ngettext("%(count)s result", "%(count)s results", 1),
        "results_other": ngettext("%(count)s result", "%(count)s results", 2),
        "articles_one": ngettext("%(count)s article", "%(count)s articles", 1),
        "articles_other": ngettext("%(count)s article", "%(count)s articles", 2),
        # The indexing notice, counted down by static/chat/indexing.js (same words as the page's).
        "indexing_none": _(INDEXING_NONE),
        "indexing_one": ngettext(INDEXING_ONE, INDEXING_OTHER, 1),
        "indexing_other": ngettext(INDEXING_ONE, INDEXING_OTHER, 2),
        "no_results": _("no results"),
        "timed_out": _("timed out"),
        "not_found": _("not found"),
        "invalid_arguments": _("invalid arguments"),
        "failed": _("failed"),
        "unknown_tool": _("unknown tool"),
        "too_many_searches": _("too many searches"),
        # How a turn ended, when it did not end well.
        "error_max_steps": _(
            "I reached my limit of steps before finishing the answer. "
            "These articles looked relevant:"
        ),
        "error_max_steps_none": _(
            "I reached my limit of steps before finishing the answer. Try a narrower question."
        ),
        "error_model_error": _(
            "The language model behind the assistant isn’t responding right now."
        ),
        # The endpoint refused the site's settings (key, model name): asking again cannot help.
        # The cause is the operator's (the admin's dashboard and the log name the setting); the
        # reader learns that the assistant is out and the blog is not, and how to search it.
        "error_model_error_setup": _(
            "The assistant is unavailable at the moment. Everything else on the blog works as "
            "usual."
        ),
        "search_instead": _("Search the articles for your question"),
        "error_bad_request": _("I couldn’t take that message."),
        # Counted down to "Try again in 1 second." (static/chat/steps.js).
        "error_rate_limited_one": ngettext(
            "You’re asking faster than I can answer. Try again in %(seconds)s second.",
            "You’re asking faster than I can answer. Try again in %(seconds)s seconds.",
            1,
        ),
        "error_rate_limited_other": ngettext(
            "You’re asking faster than I can answer. Try again in %(seconds)s second.",
            "You’re asking faster than I can answer. Try again in %(seconds)s seconds.",
            2,
        ),
        "error_rate_limited_at": _(
            "You’re asking faster than I can answer. Try again at %(time)s."
        ),
        "error_rate_limited_now": _("You can ask again now."),
        # A day's budget, by the `reason` of its `rate_limited` event (agent.ratelimit.DAY_BUDGETS).
        "error_daily_budget": _("The assistant has used today’s budget. Try again at %(time)s."),
        "error_ip_budget": _("You have used today’s budget. Try again at %(time)s."),
        "error_network_budget": _("Your network has used today’s budget. Try again at %(time)s."),
        # An address's messages in 24 h (AGENT_MESSAGES_PER_DAY_PER_IP), or its /48's.
        "error_ip_day": _(
            "You have asked as many questions as one connection may in a day. "
            "Try again at %(time)s."
        ),
        "error_network_day": _(
            "Your network has asked as many questions as it may in a day. Try again at %(time)s."
        ),
        "error_budget": _(
            "This conversation has reached its length limit. Start a new chat to go on."
        ),
        # Mostly another tab's answer (this panel sends nothing while its own runs), or one
        # still being saved: there is no Stop to press here.
        "error_busy": _(
            "Another answer of this chat is still running, perhaps in another tab. "
            "Ask again once it has finished."
        ),
        "error_busy_session": _(
            "Answers in your other chats are still running. Ask again once one has finished."
        ),
        "error_busy_network": _(
            "Many people on your network are asking at once. Ask again in a moment."
        ),
        "error_cancelled": _("Stopped."),
        "error_interrupted": _("This answer was interrupted."),
        "error_unavailable": _("The assistant is unavailable for a moment. Reconnecting…"),
        "error_internal": _("Something went wrong on our side. Please try again."),
        "error_connection": _("The connection dropped before the answer was finished."),
        "error_unreachable": _("Couldn’t reach the server, so your question wasn’t sent."),
        "question_kept": _("Your question is back in the box: press Enter to send it again."),
        # A long wait (a day's budget, the limit of a minute past 90 s): sent at once, refused.
        "question_kept_later": _("Your question is kept in the box for when you can ask again."),
        # The connection and the transcript.
        "connecting": _("Connecting…"),
        "reconnecting": _("Connection lost. Reconnecting…"),
        "browser_offline": _("You’re offline. Waiting for the network…"),
        "restore_failed": _("The earlier messages couldn’t be loaded."),
        # "New chat" on a conversation: gone from the panel, so it can be brought back.
        "new_chat_started": _("New chat started."),
        "new_chat_undo": _("Bring back the last conversation"),
        "new_chat_delete": _("Delete it"),
        # Hidden from the reader's session, kept for review (agent.services.conversation_hide).
        "conversation_deleted": _(
            "Conversation deleted. The blog’s editors still see it, as they see every conversation."
        ),
        "conversation_delete_failed": _("It couldn’t be deleted. Try again."),
        "restore_failed_reconnecting": _(
            "The earlier messages couldn’t be loaded. Reconnecting to load them…"
        ),
    }
