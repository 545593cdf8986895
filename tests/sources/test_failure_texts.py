"""What a source's failure tells a person, for every real source and every cause: one rule
(``sources._failures``), so that "could not reach" means no connection at all and "an
error on its side" means the source answered with one; a rate limit is named as such. No
exception class, library name or retry count reaches the text, and the hint says what to
do. The chat's summary of failed sources words each by the same cause.

Each source runs its own search against its recorded answers (``damaged_answers``), the
request failing the given way every time; retries run on the fake clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import pytest

from scholarstream.errors import SourceUnavailableError
from scholarstream.settings import SourceSettings
from scholarstream.sources import (
    FailureCause,
    SearchQuery,
    SourceFailedError,
    SourceHttp,
    SourceHub,
    build_source,
    failure_words,
)
from tests.sources.conftest import FakeClock, MakeContext
from tests.sources.damaged_answers import CASES, Answer, Case, cut_connection, faulty, hang

# One search per source: every source goes through the same HTTP layer.
SEARCHES = [case for case in CASES if case.id.endswith("-search") or case.id == "pubmed-esearch"]
assert {case.source for case in SEARCHES} == {case.source for case in CASES}

# What must never reach a person's text: the HTTP library's classes and words, our retry
# bookkeeping, and the old wrong diagnosis of every failure.
INTERNAL = re.compile(
    r"ConnectError|ConnectTimeout|ReadTimeout|ReadError|RemoteProtocolError|httpx|Errno|"
    r"SSLError|attempts? made|rate-limiting us|Traceback",
    re.IGNORECASE,
)


def _raise(
    error: type[httpx.TransportError], text: str
) -> Callable[[Answer, httpx.Request], httpx.Response]:
    def fault(answer: Answer, request: httpx.Request) -> httpx.Response:
        raise error(text, request=request)

    return fault


@dataclass(frozen=True)
class Fault:
    id: str
    fault: Callable[[Answer, httpx.Request], httpx.Response]
    cause: FailureCause
    message: str
    """The message, with {label} for the source's label."""
    todo: str
    """Words the hint must have."""


FAULTS = [
    Fault(
        "no-network",
        _raise(httpx.ConnectError, "[Errno -3] Temporary failure in name resolution"),
        FailureCause.UNREACHABLE,
        "Could not reach {label} (no network connection from this server?).",
        "Check that this server can reach the internet",
    ),
    Fault(
        "connection-refused",
        _raise(httpx.ConnectError, "[Errno 111] Connection refused"),
        FailureCause.UNREACHABLE,
        "Could not reach {label} (no network connection from this server?).",
        "Check that this server can reach the internet",
    ),
    Fault(
        "tls-refused",
        _raise(httpx.ConnectError, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"),
        FailureCause.INSECURE,
        "Could not make a secure connection to {label}.",
        "proxy or firewall",
    ),
    Fault(
        "hangs",
        lambda answer, request: hang(request),
        FailureCause.TIMEOUT,
        "{label} did not answer in time.",
        "try again in a few minutes",
    ),
    Fault(
        "cut-off",
        cut_connection,
        FailureCause.DROPPED,
        "{label} broke off its answer before it was complete.",
        "try again in a few minutes",
    ),
    Fault(
        "rate-limited",
        lambda answer, request: httpx.Response(429, text="Too Many Requests"),
        FailureCause.RATE_LIMITED,
        "{label} is limiting how often it may be searched (too many requests).",
        "Wait a minute or two, then try again",
    ),
    Fault(
        "server-error",
        lambda answer, request: httpx.Response(503, text="<html>upstream down</html>"),
        FailureCause.SERVER_ERROR,
        "{label} answered with an error on its side (HTTP 503 Service Unavailable).",
        "The problem is at the source, not here",
    ),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
@pytest.mark.parametrize("case", SEARCHES, ids=[c.source for c in SEARCHES])
async def test_every_source_says_what_happened_by_its_cause(
    case: Case, fault: Fault, make_context: MakeContext
) -> None:
    source = build_source(
        case.source, make_context(faulty(case, fault.fault, times=99), **case.settings)
    )

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source)

    error = caught.value
    assert isinstance(error, SourceFailedError)
    assert error.cause is fault.cause
    assert error.code == "source_unavailable"
    assert error.message == fault.message.format(label=case.label)
    assert error.hint is not None
    assert fault.todo in error.hint
    assert not INTERNAL.search(f"{error.message} {error.hint}"), error


async def test_a_long_rate_limit_names_the_wait(
    make_context: MakeContext, clock: FakeClock
) -> None:
    case = next(c for c in SEARCHES if c.source == "clinicaltrials")
    limited = faulty(
        case,
        lambda answer, request: httpx.Response(429, headers={"Retry-After": "300"}),
        times=99,
    )

    with pytest.raises(SourceFailedError) as caught:
        await case.run(build_source(case.source, make_context(limited, **case.settings)))

    assert caught.value.cause is FailureCause.RATE_LIMITED
    assert caught.value.message == (
        "ClinicalTrials.gov is limiting how often it may be searched and asks us to wait 5 minutes."
    )
    assert caught.value.hint is not None
    assert caught.value.hint.startswith("Wait 5 minutes, then try again")
    assert clock.sleeps == []  # not waited out


async def test_a_multi_source_search_reports_each_cause(clock: FakeClock) -> None:
    """Through the hub: one source rate-limited, one erroring, one answering; each failed
    status carries its cause and its plain message, and the chat's summary clause for it."""
    pubmed = next(c for c in SEARCHES if c.source == "pubmed")

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return httpx.Response(429)
        if request.url.host == "clinicaltrials.gov":
            return httpx.Response(500)
        _, recorded = pubmed.answer(request)
        return httpx.Response(
            200, content=recorded.body, headers={"content-type": recorded.content_type}
        )

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    http = SourceHttp(client, sleep=clock.sleep, jitter=lambda: 0.5, clock=clock)
    hub = SourceHub(SourceSettings(), http)
    try:
        result = await hub.search(
            ["pubmed", "openalex", "clinicaltrials"], SearchQuery(text="asthma", limit=5)
        )
    finally:
        await client.aclose()

    by_source = {status.source: status for status in result.statuses}
    assert by_source["pubmed"].ok
    limited, erroring = by_source["openalex"], by_source["clinicaltrials"]
    assert (limited.cause, erroring.cause) == ("rate_limited", "server_error")
    assert limited.error == "OpenAlex is limiting how often it may be searched (too many requests)."
    assert erroring.error == (
        "ClinicalTrials.gov answered with an error on its side (HTTP 500 Internal Server Error)."
    )
    assert not limited.unreachable and not erroring.unreachable
    assert failure_words(limited.cause) == (
        "limited how often it may be searched",
        "Wait a minute or two, then try again.",
    )
    assert failure_words(None) is None
    assert failure_words("not-a-cause") is None
