"""The per-address request bucket: a burst, refilled at a steady rate, forgotten when full."""

from config.request_rate import HttpRequestRate


def bucket(per_second: float = 2.0, burst: int = 3) -> HttpRequestRate:
    return HttpRequestRate(None, per_second=per_second, burst=burst)


def test_a_burst_passes_then_the_next_waits_for_the_refill():
    rate = bucket()

    assert [rate.take("a", 0.0) for _ in range(3)] == [None, None, None]
    assert rate.take("a", 0.0) == 0.5  # one request in half a second at 2 a second
    assert rate.take("b", 0.0) is None  # another address has a bucket of its own
    assert rate.take("a", 0.5) is None
    assert rate.take("a", 0.5) is not None


def test_a_refused_request_does_not_spend_a_token():
    rate = bucket(per_second=1.0, burst=1)
    rate.take("a", 0.0)

    for _ in range(50):  # a flood: each refused, none pushing the wait further out
        assert rate.take("a", 0.5) == 0.5
    assert rate.take("a", 1.0) is None


def test_a_sweep_forgets_the_addresses_whose_bucket_is_full_again():
    rate = bucket()
    rate.take("quiet", 0.0)
    rate.take("busy", 0.0)
    rate.take("busy", 10.0)

    rate.sweep(10.0)

    assert set(rate.buckets) == {"busy"}


def test_an_ipv6_48_has_a_bucket_of_its_own_and_a_refusal_spends_neither():
    rate = HttpRequestRate(None, per_second=1.0, burst=2, network=(1.0, 3))

    taken = [rate.take(f"a{i}", 0.0, network="2001:db8::/48") for i in range(4)]
    assert taken == [None, None, None, 1.0]  # three from three /64s, then the /48 is empty
    assert rate.buckets["a3"] == (2.0, 0.0)  # the refused request took nothing from its /64
    assert rate.take("a0", 1.0, network="2001:db8::/48") is None


def test_a_refused_address_is_shut_at_the_socket_until_a_tenth_of_its_burst_is_back(
    monkeypatch,
):
    clock = [100.0]
    monkeypatch.setattr("config.request_rate.time.monotonic", lambda: clock[0])
    rate = HttpRequestRate(None, per_second=10.0, burst=100)

    for _ in range(100):
        rate.take("203.0.113.9", clock[0])
    open_while_full = rate.exhausted("203.0.113.9")  # empty, but never refused yet
    refused = rate.take("203.0.113.9", clock[0])
    shut = rate.exhausted("203.0.113.9")
    clock[0] += 0.5  # five requests back: still shut, though one could pass
    half_way = rate.exhausted("203.0.113.9")
    clock[0] += 0.6  # more than ten back
    reopened = rate.exhausted("203.0.113.9")

    assert open_while_full is False and refused is not None
    assert shut and half_way
    assert reopened is False and rate.shut == set()
    assert rate.exhausted("127.0.0.1") is False  # loopback is never counted
