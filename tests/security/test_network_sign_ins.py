"""The /64s of one IPv6 /48 share its allowance of admin sign-in attempts.

A wrong password costs the server a full password hash (Django hashes one for an unknown user
name too, so timing does not tell names apart): about 0.5 CPU-seconds each on the test machine.
Sign-ins counted the /64 and the user name alone, so a visitor with a /48 (65,536 /64s) guessed
ADMIN_LOGIN_ATTEMPTS times from each /64, at a fresh user name each time: as many hashes a
second as the /48's request rate let through, every core busy. Seven /64s of one /48, two
guesses each: all fourteen were hashed. Now the /48 counts too, at four addresses' worth.
"""

import httpx
import pytest

from tests.security.test_admin_sign_in import attempt

pytestmark = pytest.mark.django_db(transaction=True)

WALKED = [f"2001:db8:d:{i:x}::1" for i in range(1, 8)]  # seven /64s of 2001:db8:d::/48
PER_ADDRESS = 2
PER_NETWORK = 5


def test_the_64s_of_one_48_share_sign_in_attempts(serve):
    server = serve(
        "network-sign-ins",
        DJANGO_TRUSTED_PROXIES="1",
        ADMIN_LOGIN_ATTEMPTS=str(PER_ADDRESS),
        ADMIN_LOGIN_ATTEMPTS_PER_NETWORK=str(PER_NETWORK),
    )

    answers = []
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=60) as guesser:
        for n, address in enumerate(WALKED):
            for guess in range(PER_ADDRESS):  # within each /64's and each user name's allowance
                name = f"nobody-{n}-{guess}"
                answers.append(attempt(guesser, name, "x", **{"X-Forwarded-For": address}))
        other_network = attempt(guesser, "nobody-else", "x", **{"X-Forwarded-For": "2001:db8:e::1"})
        ipv4 = attempt(guesser, "nobody-v4", "x", **{"X-Forwarded-For": "192.0.2.7"})

    statuses = [answer.status_code for answer in answers]
    # Before: 200 (a form saying "enter a correct username and password", a hash computed) for
    # all fourteen.
    assert statuses == [200] * PER_NETWORK + [429] * (len(statuses) - PER_NETWORK)
    assert int(answers[-1].headers["Retry-After"]) >= 1
    assert other_network.status_code == 200  # another /48 has its own allowance
    assert ipv4.status_code == 200  # IPv4 has no network count of its own
