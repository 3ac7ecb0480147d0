"""Database sessions that keep a key the pages minted, until the chat writes its row.

Pages give a cookie-less visitor a key without a row (config/middleware.py); Django's store
forgets a key it cannot find when it loads (and the session middleware then deletes the
cookie), which would lose the key on the first page that reads `request.user`. This store
keeps a well-formed key instead; nothing is written until the first chat message saves it.
"""

from django.contrib.sessions.backends import db
from django.utils.crypto import get_random_string, salted_hmac

KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
KEY_CHARS = frozenset(KEY_ALPHABET)
# 40 hex characters (160 bits): never shaped like a key (32 of [a-z0-9]), so a row, a spooled
# turn or a Redis key already digested is told from one that still holds the cookie.
DIGEST_CHARS = 40
_DIGEST_SALT = "docent.session-digest"


def session_key_mint() -> str:
    """A new key for a visitor, as Django makes them (no row is written)."""
    return get_random_string(32, KEY_ALPHABET)


def key_well_formed(key: str | None) -> bool:
    """Shaped like the keys this site mints (32 of [a-z0-9])."""
    return bool(key) and len(key) == 32 and set(key) <= KEY_CHARS


def session_digest(key: str | None) -> str:
    """What the site keeps of a visitor's session key: a keyed hash, never the cookie itself.

    The key is the cookie, and a signed-in editor's is their admin session: a conversation's
    row, a rate limit's Redis key or a spooled turn that held it handed a live session to
    anyone who read them. HMAC-SHA256 under a key derived from SECRET_KEY, so nobody without
    it can turn a digest back into the cookie or test guesses offline. Anything not shaped like
    a key (a digest already, the evaluation's own labels, "") is returned as it is.
    """
    if not key_well_formed(key):
        return key or ""
    return salted_hmac(_DIGEST_SALT, key, algorithm="sha256").hexdigest()[:DIGEST_CHARS]


class SessionStore(db.SessionStore):
    def _validate_session_key(self, key: str | None) -> bool:
        # Only keys shaped like those this site makes reach the database. Django takes any 8+
        # characters, and a quoted cookie may carry any (`"…\000…"` decodes to NUL): PostgreSQL
        # refused the lookup, and the chat, the transcript API and the admin answered 500.
        return key_well_formed(key)

    def _get_session_from_db(self):
        key = self.session_key
        found = super()._get_session_from_db()
        if found is None and key_well_formed(key):
            self._session_key = key  # a minted key without its row yet: keep it
        return found
