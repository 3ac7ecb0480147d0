"""A sign-in post with a huge user name costs no more than a short one.

Each failed sign-in is counted per user name, NFKC-normalised as Django's form reads it, and
the name was normalised whole before it was cut to Django's 150 characters. NFKC costs with
the text and can grow a character eighteenfold ("ﷺ"): 800,000 of them, a 2.4 MB form that
any client may post without a CSRF token (the count comes first), held the process's event
loop for 0.8 CPU-seconds (3 s on a busy machine, /healthz waiting as long); an address may
post 100 at once and 10 a second after. A name over 150 characters can never
normalise to a shorter one, so Django's form does not normalise it, and now neither does the
count.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

CPU_SECONDS = 1.0  # the most three such posts may cost now (0.06 here); 2.6 before
HUGE_NAME = "\ufdfa" * 800_000  # 2.4 MB as UTF-8; Django's form limit is 2.5 MB


def test_a_huge_user_name_is_not_normalised_whole(serve):
    server = serve("admin-huge-name")
    body = b"username=" + HUGE_NAME.encode() + b"&password=guess"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}

    with httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/admin/login/", content=b"username=editor&password=guess", headers=headers)
        before = server.cpu_seconds()
        answers = [
            client.post("/admin/login/", content=body, headers=headers).status_code
            for _ in range(3)
        ]
        spent = server.cpu_seconds() - before

    # Refused unread now, as larger than a sign-in form (test_admin_login_body.py); a name
    # within that size is still cut to 150 characters before it is normalised.
    assert answers == [413] * 3
    assert spent < CPU_SECONDS
    assert "Traceback" not in server.output()
