"""Login rate limiting: failed logins are counted per account and address and per address
alone, over a sliding window; past a limit, login is refused (429 with ``Retry-After``)
until the oldest counted failure leaves the window, even with the right password, so a
guesser learns nothing more. A successful login clears its account and address.

Counts are kept in the memory of the API process: with several API processes behind a
proxy, each counts what it sees (a guesser gets at most that many times the limit).

A base module (the runtime holds the process's throttle); what a login checks lives in
``scholarstream.accounts`` (``throttled_login``)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from scholarstream.errors import AuthenticationError, RateLimitedError
from scholarstream.settings import ServerSettings

__all__ = ["MAX_TRACKED_KEYS", "LoginThrottle"]

T = TypeVar("T")

# Bounds the memory an attacker who varies names and addresses can make us hold.
MAX_TRACKED_KEYS = 100_000


@dataclass
class LoginThrottle:
    max_failures: int
    max_failures_per_address: int
    window_seconds: float
    clock: Callable[[], float] = time.monotonic
    _failures: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> LoginThrottle:
        return cls(
            max_failures=settings.login_max_failures,
            max_failures_per_address=settings.login_max_failures_per_address,
            window_seconds=settings.login_window_seconds,
        )

    async def attempt(self, username: str, address: str, login: Callable[[], Awaitable[T]]) -> T:
        """``login()`` (which raises ``AuthenticationError`` for a wrong password), refused
        while a limit is reached, counting its failures (``accounts.throttled_login``)."""
        self.check(username, address)
        try:
            outcome = await login()
        except AuthenticationError:
            self.failed(username, address)
            raise
        self.succeeded(username, address)
        return outcome

    def check(self, username: str, address: str) -> None:
        """Raises ``RateLimitedError`` while either limit is reached."""
        now = self.clock()
        for key, limit in self._limits(username, address):
            failures = self._recent(key, now)
            if len(failures) >= limit:
                wait = failures[len(failures) - limit] + self.window_seconds - now
                raise RateLimitedError(
                    "Too many failed logins: login is paused for a while.",
                    retry_after_seconds=max(1, math.ceil(wait)),
                    hint=f"Try again in {_duration(wait)}; if you forgot the password, ask "
                    "the server's administrator.",
                )

    def failed(self, username: str, address: str) -> None:
        now = self.clock()
        for key, _ in self._limits(username, address):
            self._recent(key, now).append(now)
            self._failures.move_to_end(key)
        while len(self._failures) > MAX_TRACKED_KEYS:
            self._failures.popitem(last=False)

    def succeeded(self, username: str, address: str) -> None:
        self._failures.pop(_account_key(username, address), None)

    def _limits(self, username: str, address: str) -> list[tuple[str, int]]:
        return [
            (_account_key(username, address), self.max_failures),
            (f"address:{address}", self.max_failures_per_address),
        ]

    def _recent(self, key: str, now: float) -> deque[float]:
        failures = self._failures.setdefault(key, deque())
        while failures and failures[0] <= now - self.window_seconds:
            failures.popleft()
        return failures


def _account_key(username: str, address: str) -> str:
    return f"account:{username.casefold()}@{address}"


def _duration(seconds: float) -> str:
    minutes = math.ceil(seconds / 60)
    if seconds <= 60:
        return f"{max(1, math.ceil(seconds))} seconds"
    return f"{minutes} minutes"
