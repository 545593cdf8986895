"""Source tests: real recorded responses served through ``httpx.MockTransport``; retries
and rate limits run on a fake clock, so nothing sleeps and nothing reaches the network."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from scholarstream.settings import SourceSettings
from scholarstream.sources import SourceContext, SourceHttp
from tests.conftest import SHARED_DATA

FIXTURES = SHARED_DATA / "api_fixtures"
Handler = Callable[[httpx.Request], httpx.Response]


def fixture_path(*parts: str) -> Path:
    path = FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"missing shared fixture {path}")
    return path


@dataclass
class FakeClock:
    """Time that moves only when code sleeps on it."""

    now: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class Recorder:
    """Serves responses from a handler and keeps every request it saw."""

    handler: Handler
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


MakeContext = Callable[..., SourceContext]


@pytest.fixture
def make_context(clock: FakeClock) -> Iterator[MakeContext]:
    """``make_context(handler, **source_settings)`` -> a SourceContext whose HTTP goes to
    ``handler`` (wrap it in ``Recorder`` to inspect requests)."""
    clients: list[httpx.AsyncClient] = []

    def factory(handler: Handler, **settings: object) -> SourceContext:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        clients.append(client)
        http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)
        return SourceContext(settings=SourceSettings.model_validate(settings), http=http)

    yield factory
    # The clients hold no sockets (MockTransport); dropping them is enough.
    clients.clear()
