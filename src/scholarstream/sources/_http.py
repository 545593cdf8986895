"""The HTTP layer every live source goes through: per-source rate limits shared by all
tasks of the process, and retries with exponential backoff and jitter on 429, 5xx and
timeouts, honouring ``Retry-After``. Failures become typed ``SourceError``s. Inside a run
(``connectivity_scope``) a machine that appears offline is not retried (``_connectivity``)."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

import httpx

from scholarstream.errors import SourceCredentialsError, SourceQueryError
from scholarstream.sources._connectivity import current_connectivity, unreachable
from scholarstream.sources._failures import FailureCause, source_failure

logger = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
Params = Mapping[str, str | int | float | None]

_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    # A Retry-After longer than this is not waited out: the source is reported unavailable.
    max_retry_after: float = 60.0

    def backoff(self, attempt: int, jitter: float) -> float:
        """Delay before retry number ``attempt`` (0-based): half fixed, half random."""
        ceiling: float = min(self.max_delay, self.base_delay * 2.0**attempt)
        return ceiling / 2 + jitter * ceiling / 2


class RateLimiter:
    """Spaces calls at least ``1 / per_second`` apart, across every task that shares it."""

    def __init__(
        self,
        per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._next_slot = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            now = self._clock()
            wait = self._next_slot - now
            if wait > 0:
                await self._sleep(wait)
            self._next_slot = max(now, self._next_slot) + self.interval


def retry_after_seconds(response: httpx.Response, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds, from either its delta-seconds or its HTTP-date form."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _body_excerpt(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text[:300]


class SourceHttp:
    """Owns no client: it is handed one (``httpx.AsyncClient``), so tests pass a
    ``MockTransport`` and the runtime closes the client."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._limiters: dict[str, RateLimiter] = {}

    def limiter(self, source: str, per_second: float) -> RateLimiter:
        """The process-wide limiter of ``source`` (created on first use)."""
        limiter = self._limiters.get(source)
        if limiter is None or limiter.interval != 1.0 / per_second:
            limiter = RateLimiter(per_second, clock=self._clock, sleep=self._sleep)
            self._limiters[source] = limiter
        return limiter

    async def get(
        self,
        source: str,
        url: str,
        *,
        per_second: float,
        params: Params | None = None,
        headers: Mapping[str, str] | None = None,
        accept_status: Collection[int] = (),
        credentials_hint: str | None = None,
        label: str | None = None,
    ) -> httpx.Response:
        """GET with the source's rate limit and the retry policy.

        Returns 2xx responses and any status in ``accept_status`` (e.g. 404 when fetching
        by id); raises ``SourceCredentialsError`` on 401/403, ``SourceQueryError`` on other
        4xx, a ``SourceFailedError`` (a ``SourceUnavailableError`` with its cause, worded by
        ``_failures``) once retries are exhausted, and ``SourceUnreachableError`` at once
        when, within a run, the machine appears offline. Messages name the source by
        ``label`` ("Semantic Scholar"), else by its name.
        """
        said = label or source
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        limiter = self.limiter(source, per_second)
        connectivity = current_connectivity()
        cause = FailureCause.UNREACHABLE
        status: int | None = None
        for attempt in range(self.retry.attempts):
            await limiter.acquire()
            delay: float | None = None
            try:
                response = await self.client.get(url, params=clean_params, headers=headers)
            except httpx.TimeoutException:
                cause, status = FailureCause.TIMEOUT, None
                logger.info("%s: timed out", source)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                # The answer started but the connection ended before all of it arrived.
                logger.info("%s: connection dropped (%s)", source, type(exc).__name__)
                cause, status = FailureCause.DROPPED, None
            except httpx.TransportError as exc:
                # The class goes to the log; people read what happened (_failures).
                logger.info("%s: could not connect (%s: %s)", source, type(exc).__name__, exc)
                # A connection refused in its TLS handshake reached a server: the network
                # works, the secure connection did not.
                tls = isinstance(exc, httpx.ConnectError) and not unreachable(exc)
                cause = FailureCause.INSECURE if tls else FailureCause.UNREACHABLE
                status = None
                if connectivity is not None and cause is FailureCause.UNREACHABLE:
                    connectivity.record_unreachable(source)
            else:
                if connectivity is not None:
                    connectivity.record_answer()
                status = response.status_code
                if response.is_success or status in accept_status:
                    return response
                if status in (401, 403):
                    raise SourceCredentialsError(
                        source,
                        f"{said} refused our credentials (HTTP {status}).",
                        hint=credentials_hint or "Check the source's API key in the settings.",
                    )
                if status not in _RETRYABLE_STATUS:
                    raise SourceQueryError(
                        source,
                        f"{said} rejected the request (HTTP {status}): {_body_excerpt(response)}",
                    )
                logger.info("%s answered HTTP %d: %s", source, status, _body_excerpt(response))
                cause = FailureCause.RATE_LIMITED if status == 429 else FailureCause.SERVER_ERROR
                delay = retry_after_seconds(response)
                if delay is not None and delay > self.retry.max_retry_after:
                    raise source_failure(source, said, cause, status=status, wait_seconds=delay)
            if attempt + 1 == self.retry.attempts:
                break
            if connectivity is not None and connectivity.probably_offline:
                # No source of this run has answered and one could not be reached at all:
                # retrying costs the user time and will not help.
                raise source_failure(source, said, cause, offline=True)
            backoff = self.retry.backoff(attempt, self._jitter())
            wait = max(backoff, delay or 0.0)
            logger.info(
                "%s: %s; retry %d/%d in %.1f s",
                source,
                cause,
                attempt + 1,
                self.retry.attempts - 1,
                wait,
            )
            await self._sleep(wait)
        logger.info("%s: gave up after %d attempts (%s)", source, self.retry.attempts, cause)
        raise source_failure(source, said, cause, status=status)
