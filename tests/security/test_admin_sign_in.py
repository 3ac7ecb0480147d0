"""Admin passwords cannot be guessed at the speed of the network.

Django's admin sign-in page has no throttle of its own: forty wrong passwords in a row were
forty answers, and the forty-first, right, one signed in.
"""

import time

import httpx
import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db(transaction=True)

LOGIN = "/admin/login/"


def attempt(client: httpx.Client, username: str, password: str, **headers: str) -> httpx.Response:
    token = (
        client.get(LOGIN, headers=headers).cookies.get("csrftoken") or client.cookies["csrftoken"]
    )
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
    return client.post(
        LOGIN, data=form, headers={"Referer": str(client.base_url) + LOGIN, **headers}
    )


def test_wrong_passwords_are_cut_off_per_address_and_per_user_name(serve):
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    server = serve("admin-sign-in", ADMIN_LOGIN_ATTEMPTS="5", DJANGO_TRUSTED_PROXIES="1")

    with httpx.Client(base_url=server.url, follow_redirects=False) as guesser:
        guesses = [attempt(guesser, "editor", f"guess-{n}").status_code for n in range(5)]
        then_right = attempt(guesser, "editor", "right-pw")
        other_name = attempt(guesser, "someone", "x")  # the address is cut off too
    with httpx.Client(base_url=server.url, follow_redirects=False) as botnet:
        # Another address, through the trusted proxy, aiming at the same account.
        elsewhere = attempt(botnet, "Editor", "right-pw", **{"X-Forwarded-For": "203.0.113.9"})
        other_user = attempt(botnet, "someone", "x", **{"X-Forwarded-For": "203.0.113.9"})

    assert guesses == [200] * 5  # the form again, "enter a correct username and password"
    assert then_right.status_code == other_name.status_code == 429
    assert int(then_right.headers["Retry-After"]) >= 1
    assert elsewhere.status_code == 429  # the user name is cut off wherever the guesses come from
    assert other_user.status_code == 200  # another address and name may still sign in


def test_other_traffic_does_not_wipe_an_addresss_sign_in_count(serve):
    """In one process, idle rate-limit keys are swept now and then. The sweep judged every key
    by the window of the limit being checked (60 s), so a sign-in count idle for a minute was
    dropped after any thousand other checks: refused searches reset a 15-minute ban."""
    server = serve("admin-sweep", ADMIN_LOGIN_ATTEMPTS="3", SEARCH_REQUESTS_PER_MINUTE_PER_IP="0")

    with httpx.Client(base_url=server.url, follow_redirects=False) as guesser:
        guesses = [attempt(guesser, "editor", f"guess-{n}").status_code for n in range(4)]
        time.sleep(61)  # the sign-in count sits idle past a one-minute window
        searches = {guesser.get("/api/search", params={"q": "x"}).status_code for _ in range(1000)}
        after = attempt(guesser, "someone-else", "x")

    assert guesses == [200, 200, 200, 429]
    assert searches == {429}
    assert after.status_code == 429  # still within ADMIN_LOGIN_WINDOW (900 s)


def test_a_flood_at_a_user_name_does_not_lock_out_a_browser_that_signed_in_before(serve):
    """The per-name count stops many addresses taking turns at one account, but it also let
    anyone who knew a staff user name lock its owner out for 15 minutes by flooding it."""
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    server = serve("admin-device", ADMIN_LOGIN_ATTEMPTS="3", DJANGO_TRUSTED_PROXIES="1")
    home = {"X-Forwarded-For": "198.51.100.1"}

    with httpx.Client(base_url=server.url, follow_redirects=False) as owner:
        first = attempt(owner, "editor", "right-pw", **home)
        owner.post(
            "/admin/logout/",
            headers={"Referer": server.url + "/admin/", **home},
            data={"csrfmiddlewaretoken": owner.cookies["csrftoken"]},
        )
        with httpx.Client(base_url=server.url, follow_redirects=False) as botnet:
            flood = [
                attempt(botnet, "Editor", "guess", **{"X-Forwarded-For": f"203.0.113.{n}"})
                for n in range(1, 5)
            ]
            stranger = attempt(botnet, "editor", "right-pw", **{"X-Forwarded-For": "192.0.2.1"})
        again = attempt(owner, "editor", "right-pw", **home)

    assert first.status_code == 302
    # The owner's sign-in did not count for the name: three guesses, then it is guarded.
    assert [r.status_code for r in flood] == [200, 200, 200, 429]
    assert stranger.status_code == 429  # a browser without the note waits, right password or not
    assert again.status_code == 302  # the owner's browser signs in during the flood
    assert "admin_device" in first.cookies  # the signed note that made it a known device


def test_other_spellings_of_a_user_name_share_its_count(serve):
    """Django's sign-in form NFKC-normalises the user name: "ｅｄｉｔｏｒ" (full width) and
    "𝐞𝐝𝐢𝐭𝐨𝐫" (mathematical bold) both sign in as "editor". Counted as typed, each spelling
    (thousands of them for one name) brought a fresh allowance of guesses at the account."""
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    server = serve("admin-spellings", ADMIN_LOGIN_ATTEMPTS="3", DJANGO_TRUSTED_PROXIES="1")

    with httpx.Client(base_url=server.url, follow_redirects=False) as botnet:
        flood = [
            attempt(botnet, "editor", "guess", **{"X-Forwarded-For": f"203.0.113.{n}"})
            for n in range(1, 4)
        ]
        spelled = [
            attempt(botnet, name, "right-pw", **{"X-Forwarded-For": f"198.51.100.{n}"})
            for n, name in enumerate(["ｅｄｉｔｏｒ", "𝐞𝐝𝐢𝐭𝐨𝐫", "ⓔⓓⓘⓣⓞⓡ"], start=1)
        ]

    assert [r.status_code for r in flood] == [200, 200, 200]  # the name's three guesses
    # Each spelling is the same account, so it waits out the flood like the plain name.
    assert [r.status_code for r in spelled] == [429, 429, 429]


@pytest.mark.parametrize("shared", ["process", "redis"])
def test_only_failed_sign_ins_count(serve, request, shared):
    """Every POST counted, right passwords too: an editor who signed in a few times in a
    quarter of an hour (a browser each, a sign-out or two) was refused the next sign-in."""
    get_user_model().objects.create_user("editor", password="right-pw", is_staff=True)
    env = {"REDIS_URL": request.getfixturevalue("redis_url")} if shared == "redis" else {}
    server = serve(f"admin-successes-{shared}", ADMIN_LOGIN_ATTEMPTS="3", **env)

    signed_in = []
    for _ in range(6):  # a new browser each time: no device cookie, the user name's count
        with httpx.Client(base_url=server.url, follow_redirects=False) as browser:
            signed_in.append(attempt(browser, "editor", "right-pw").status_code)
    with httpx.Client(base_url=server.url, follow_redirects=False) as guesser:
        guesses = [attempt(guesser, "editor", f"guess-{n}").status_code for n in range(4)]
        then_right = attempt(guesser, "editor", "right-pw")

    assert signed_in == [302] * 6  # twice the limit, all signed in
    assert guesses == [200, 200, 200, 429]  # the failures still count, from the same address
    assert then_right.status_code == 429
