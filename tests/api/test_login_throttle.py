"""Login rate limiting: the throttle's rules on a controlled clock, then through the real
login routes (API and web form)."""

from __future__ import annotations

import pytest

from scholarstream.accounts import LoginThrottle
from scholarstream.errors import RateLimitedError
from scholarstream.settings import Settings
from tests.api.conftest import ClientFactory
from tests.helpers import PASSWORD

LOGIN = "/api/v1/auth/login"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _throttle(clock: Clock) -> LoginThrottle:
    return LoginThrottle(max_failures=3, max_failures_per_address=5, window_seconds=60, clock=clock)


def test_an_account_is_paused_after_its_failures_until_the_oldest_leaves_the_window() -> None:
    clock = Clock()
    throttle = _throttle(clock)
    for at in (1000.0, 1010.0, 1030.0):
        clock.now = at
        throttle.check("alice", "10.0.0.1")
        throttle.failed("alice", "10.0.0.1")
    clock.now = 1040.0
    with pytest.raises(RateLimitedError) as refused:
        throttle.check("Alice", "10.0.0.1")  # names compare case-insensitively
    # Until the failure at 1000 is 60 s old.
    assert refused.value.retry_after_seconds == 20
    assert refused.value.response_headers == {"Retry-After": "20"}
    assert "Try again in 20 seconds" in (refused.value.hint or "")
    clock.now = 1060.0
    throttle.check("alice", "10.0.0.1")  # paused no longer
    # Another address may still try the same account.
    throttle.check("alice", "10.0.0.2")


def test_the_pause_holds_for_the_window_after_the_last_counted_failure() -> None:
    clock = Clock()
    throttle = _throttle(clock)
    for _ in range(3):
        throttle.failed("alice", "10.0.0.1")
    with pytest.raises(RateLimitedError) as refused:
        throttle.check("alice", "10.0.0.1")
    assert refused.value.retry_after_seconds == 60
    clock.now += 59
    with pytest.raises(RateLimitedError):
        throttle.check("alice", "10.0.0.1")
    clock.now += 1
    throttle.check("alice", "10.0.0.1")


def test_one_address_guessing_many_accounts_is_paused() -> None:
    clock = Clock()
    throttle = _throttle(clock)
    for name in ("a", "b", "c", "d", "e"):
        throttle.failed(name, "10.0.0.9")
    with pytest.raises(RateLimitedError):
        throttle.check("f", "10.0.0.9")
    throttle.check("f", "10.0.0.10")


def test_a_successful_login_clears_its_account_but_not_its_address() -> None:
    clock = Clock()
    throttle = _throttle(clock)
    for _ in range(2):
        throttle.failed("alice", "10.0.0.1")
    throttle.succeeded("alice", "10.0.0.1")
    for _ in range(2):
        throttle.failed("alice", "10.0.0.1")
    throttle.check("alice", "10.0.0.1")  # 2 of 3: the earlier two were cleared
    throttle.failed("bob", "10.0.0.1")
    with pytest.raises(RateLimitedError):  # 5 failures from this address in all
        throttle.check("carol", "10.0.0.1")


def test_the_api_refuses_logins_past_the_limit_even_with_the_right_password(
    multi: tuple[Settings, ClientFactory],
) -> None:
    settings, make_client = multi
    settings.server.login_max_failures = 3
    client = make_client(settings)
    for _ in range(3):
        wrong = client.post(LOGIN, json={"username": "alice", "password": "nope"})
        assert wrong.status_code == 401
    refused = client.post(LOGIN, json={"username": "alice", "password": PASSWORD})
    assert refused.status_code == 429
    body = refused.json()
    assert body["code"] == "rate_limited"
    assert "Too many failed logins" in body["message"]
    assert int(refused.headers["retry-after"]) > 0
    assert "scholarstream_session" not in client.cookies
    # Another account is not paused by alice's failures.
    bob = client.post(LOGIN, json={"username": "bob", "password": PASSWORD})
    assert bob.status_code == 200 and bob.json()["username"] == "bob"


def test_the_login_form_says_when_to_try_again(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    settings.server.login_max_failures = 2
    client = make_client(settings)
    for _ in range(2):
        wrong = client.post("/login", data={"username": "alice", "password": "nope"})
        assert wrong.status_code == 401
    refused = client.post("/login", data={"username": "alice", "password": PASSWORD})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) > 0
    assert "Too many failed logins" in refused.text and "Try again in" in refused.text
    assert "scholarstream_session" not in client.cookies
