"""The shared HTTP layer: retries, Retry-After, typed failures and per-source rate limits,
on a fake clock (nothing sleeps for real)."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import itertools
from collections.abc import Collection, Iterator

import httpx
import pytest

from scholarstream.errors import SourceCredentialsError, SourceQueryError, SourceUnavailableError
from scholarstream.sources import Params, SourceHttp
from tests.sources.conftest import FakeClock, Handler, Recorder

URL = "https://api.example.org/search"


def scripted(*responses: httpx.Response | type[httpx.TransportError]) -> Handler:
    """Answers in turn; an exception class is raised instead of answering."""
    queue: Iterator[httpx.Response | type[httpx.TransportError]] = iter(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        answer = next(queue)
        if isinstance(answer, httpx.Response):
            return answer
        raise answer("scripted failure", request=request)

    return handler


def http_for(recorder: Recorder, clock: FakeClock) -> SourceHttp:
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)


async def get(
    http: SourceHttp,
    *,
    params: Params | None = None,
    accept_status: Collection[int] = (),
    credentials_hint: str | None = None,
) -> httpx.Response:
    return await http.get(
        "example",
        URL,
        per_second=1000.0,
        params=params,
        accept_status=accept_status,
        credentials_hint=credentials_hint,
    )


# --- retries -------------------------------------------------------------------------


async def test_a_429_waits_the_seconds_retry_after_asks(clock: FakeClock) -> None:
    recorder = Recorder(
        scripted(httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(200))
    )

    response = await get(http_for(recorder, clock))

    assert response.status_code == 200
    assert len(recorder.requests) == 2
    assert clock.sleeps == [7.0]


async def test_a_429_waits_until_the_http_date_retry_after_gives(clock: FakeClock) -> None:
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=45)
    retry_after = email.utils.format_datetime(when, usegmt=True)
    recorder = Recorder(
        scripted(httpx.Response(429, headers={"Retry-After": retry_after}), httpx.Response(200))
    )

    await get(http_for(recorder, clock))

    (slept,) = clock.sleeps
    assert 43.0 <= slept <= 45.0  # the date has whole seconds; a little time has passed


async def test_server_errors_are_retried_with_growing_backoff(clock: FakeClock) -> None:
    recorder = Recorder(scripted(httpx.Response(503), httpx.Response(502), httpx.Response(200)))

    response = await get(http_for(recorder, clock))

    assert response.status_code == 200
    assert len(recorder.requests) == 3
    # Half fixed, half jitter (0.5 here) of 0.5 s, then of 1 s.
    assert clock.sleeps == [0.375, 0.75]


async def test_a_timeout_is_retried(clock: FakeClock) -> None:
    recorder = Recorder(scripted(httpx.ReadTimeout, httpx.Response(200, text="ok")))

    response = await get(http_for(recorder, clock))

    assert response.text == "ok"
    assert len(recorder.requests) == 2
    assert clock.sleeps == [0.375]


async def test_exhausted_retries_make_the_source_unavailable(clock: FakeClock) -> None:
    recorder = Recorder(lambda request: httpx.Response(503, text="Service Unavailable"))

    with pytest.raises(SourceUnavailableError) as caught:
        await get(http_for(recorder, clock))

    assert caught.value.message == (
        "example answered with an error on its side (HTTP 503 Service Unavailable)."
    )
    assert caught.value.source == "example"
    assert caught.value.code == "source_unavailable"
    assert caught.value.hint is not None
    assert "try again" in caught.value.hint
    assert len(recorder.requests) == 4
    assert clock.sleeps == [0.375, 0.75, 1.5]


async def test_a_source_that_cannot_be_reached_is_unavailable(clock: FakeClock) -> None:
    recorder = Recorder(scripted(*([httpx.ConnectError] * 4)))

    with pytest.raises(SourceUnavailableError) as caught:
        await get(http_for(recorder, clock))

    assert (
        caught.value.message == "Could not reach example (no network connection from this server?)."
    )

    assert len(recorder.requests) == 4


async def test_a_retry_after_too_long_to_wait_is_unavailability_at_once(
    clock: FakeClock,
) -> None:
    recorder = Recorder(lambda request: httpx.Response(429, headers={"Retry-After": "3600"}))

    with pytest.raises(SourceUnavailableError) as caught:
        await get(http_for(recorder, clock))

    assert caught.value.message == (
        "example is limiting how often it may be searched and asks us to wait 60 minutes."
    )
    assert caught.value.hint is not None
    assert caught.value.hint.startswith("Wait 60 minutes, then try again")
    assert len(recorder.requests) == 1
    assert clock.sleeps == []


# --- refusals ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_credentials_are_not_retried(status: int, clock: FakeClock) -> None:
    recorder = Recorder(lambda request: httpx.Response(status))

    with pytest.raises(SourceCredentialsError) as caught:
        await get(http_for(recorder, clock), credentials_hint="Set SCHOLARSTREAM_X.")

    assert caught.value.message == f"example refused our credentials (HTTP {status})."
    assert caught.value.hint == "Set SCHOLARSTREAM_X."
    assert len(recorder.requests) == 1


async def test_a_400_is_a_query_error_quoting_the_answer(clock: FakeClock) -> None:
    recorder = Recorder(lambda request: httpx.Response(400, text="Unknown field\n  'colour'"))

    with pytest.raises(SourceQueryError) as caught:
        await get(http_for(recorder, clock))

    assert caught.value.message == (
        "example rejected the request (HTTP 400): Unknown field 'colour'"
    )
    assert caught.value.code == "bad_query"
    assert len(recorder.requests) == 1


async def test_accepted_statuses_are_returned(clock: FakeClock) -> None:
    recorder = Recorder(lambda request: httpx.Response(404))

    response = await get(http_for(recorder, clock), accept_status=(404,))

    assert response.status_code == 404


async def test_parameters_without_a_value_are_not_sent(clock: FakeClock) -> None:
    recorder = Recorder(lambda request: httpx.Response(200))

    await get(http_for(recorder, clock), params={"q": "x y", "key": None, "n": 5})

    assert dict(recorder.requests[0].url.params) == {"q": "x y", "n": "5"}


# --- rate limits ---------------------------------------------------------------------


async def test_concurrent_tasks_of_a_source_share_its_limiter(clock: FakeClock) -> None:
    sent: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(clock.now)
        return httpx.Response(200)

    http = http_for(Recorder(handler), clock)

    await asyncio.gather(
        *(http.get("slow", "https://slow.example.org/", per_second=2.0) for _ in range(4))
    )

    assert [b - a for a, b in itertools.pairwise(sent)] == pytest.approx([0.5] * 3)
    assert http.limiter("slow", 2.0) is http.limiter("slow", 2.0)


async def test_each_source_has_its_own_limiter(clock: FakeClock) -> None:
    http = http_for(Recorder(lambda request: httpx.Response(200)), clock)
    for _ in range(3):
        await http.get("slow", "https://slow.example.org/", per_second=2.0)
    assert clock.sleeps == pytest.approx([0.5, 0.5])

    await http.get("fast", "https://fast.example.org/", per_second=10.0)

    # "slow" has its next slot 0.5 s ahead; "fast" does not wait for it.
    assert clock.sleeps == pytest.approx([0.5, 0.5])
