"""How one model request survives a provider's faults: the product's retry policy, the
same for every provider, applied to every model the registry builds: ``ProviderRetries``,
a pydantic-ai capability that agent runs add (the gateway, the stream guide), and
``RetryPolicy`` itself around each of the chat loop's direct model requests
(``chat.agent_loop``).

============================================  ==========================================
fault                                         what happens
============================================  ==========================================
429 (not an exhausted quota), 408, 409, 5xx,  tried again, at most ``max_retries`` times,
connection refused or dropped before an       after the provider's ``Retry-After`` if it
answer started                                sent one, else after 0.5 s, 1 s, 2 s ...
``Retry-After`` above ``max_retry_after``     not waited on: the request fails at once
(30 s), or above what is left of the budget   (the error says how long it asked for)
no answer within the budget (a hang)          not tried again: the budget is spent
a stream that breaks after it started         not tried again: its text reached the user
the server cannot do what was asked (no tool  not tried again, whatever the status (llama-
calling, no JSON schema, context too long:    server answers HTTP 500 "tools param requires
``capability_errors``)                        --jinja flag"): the same request fails again
anything else (401, 403, 404, 400, quota)     not tried again: the same request would fail
============================================  ==========================================

The budget is ``llm.timeout_seconds`` for one request to a model, every attempt and every
wait between attempts included: each attempt gets what is left of it. On a streamed
request (chat) it bounds the wait for the first output and then each silence between
chunks, not the length of a long answer: that is ``llm.deadline_seconds``, the total
deadline of a call (``llm.calls``). The provider SDKs' own retries are turned off
(``max_retries=0``): one policy, not two stacked ones with their own waits.

A request that gives up raises the provider's last error, with what the policy did
recorded on it (``retry_record``) for the message the user sees (``model_error``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import time
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RetryModelRequest, RunContext
from pydantic_ai.capabilities import AbstractCapability, WrapModelRequestHandler
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.settings import ModelSettings

from scholarstream.llm._capability_errors import missing_capability
from scholarstream.llm._roles import ResolvedModel

__all__ = [
    "MAX_RETRIES",
    "MAX_RETRY_AFTER_SECONDS",
    "ProviderRetries",
    "RetryPolicy",
    "RetryRecord",
    "retry_capabilities",
    "retry_record",
]

MAX_RETRIES = 2
"""Retries of a transient fault: a request is sent at most three times."""

MAX_RETRY_AFTER_SECONDS = 30.0
"""The longest ``Retry-After`` waited for. A provider asking for longer is out of quota or
overloaded for a while: the user hears so at once instead of watching a spinner."""

_RETRIED_STATUSES = frozenset({408, 409, 429})
_RECORD_ATTRIBUTE = "_scholarstream_retry_record"


@dataclass(frozen=True)
class RetryRecord:
    """What the policy did before it gave up on a request."""

    attempts: int
    """Requests sent, the failed last one included."""
    reason: str
    """Why it stopped: ``not_retried`` (the fault is not transient), ``attempts`` (the
    retries are used up), ``retry_after_too_long`` or ``out_of_time``."""
    retry_after: float | None = None
    """The wait the provider asked for last, if it asked."""


def retry_record(error: BaseException) -> RetryRecord | None:
    """What the policy did before ``error`` ended the request; ``None`` if it never saw it."""
    record = getattr(error, _RECORD_ATTRIBUTE, None)
    return record if isinstance(record, RetryRecord) else None


@dataclass(frozen=True)
class RetryPolicy:
    timeout_seconds: float
    """The budget of one request (``llm.timeout_seconds``)."""
    max_retries: int = MAX_RETRIES
    max_retry_after: float = MAX_RETRY_AFTER_SECONDS
    first_backoff: float = 0.5
    max_backoff: float = 8.0

    def is_transient(self, error: Exception) -> bool:
        """A fault that the same request, sent again, may not meet."""
        if not isinstance(error, ModelAPIError) or error.in_stream:
            return False
        if missing_capability(error) is not None:
            return False  # the server cannot do it: asking again gets the same answer
        if isinstance(error, (ModelTimeoutError, ModelRequestTimeout)):
            return False  # the attempt had the whole budget left; nothing is left for another
        if isinstance(error, ModelQuotaExceededError):
            return False  # waiting does not refill an account
        if isinstance(error, (ModelRateLimitError, ModelUnavailableError, ModelServerError)):
            return True
        if isinstance(error, ModelHTTPError):
            return error.status_code in _RETRIED_STATUSES or error.status_code >= 500
        return isinstance(error, ModelConnectionError)

    def backoff(self, retry: int) -> float:
        """The wait before retry number ``retry`` (from 1) when the provider named none."""
        wait: float = min(self.first_backoff * 2.0 ** (retry - 1), self.max_backoff)
        return wait * (1 - 0.25 * random.random())  # jitter: retries of many calls spread out

    @staticmethod
    def attempt_settings(
        remaining: float, *, streaming: bool, base: ModelSettings | None = None
    ) -> ModelSettings:
        """``base`` for one attempt with ``remaining`` seconds of the budget left: the SDK's
        own retries off (one policy, not two stacked ones), every wait bounded by what is
        left; on a stream, the wait for its first event too."""
        remaining = max(remaining, 0.001)
        settings: ModelSettings = {**(base or {}), "max_retries": 0, "timeout": remaining}
        if streaming:
            settings["first_event_timeout"] = remaining
        else:
            settings["request_timeout"] = remaining
        return settings

    def wait_before_retry(self, error: Exception, attempt: int, remaining: float) -> float:
        """Seconds to wait before sending the request again after attempt ``attempt``
        failed with ``error``; raises ``error`` (with its ``RetryRecord``) when it is not
        to be sent again."""
        asked = error.retry_after if isinstance(error, ModelAPIError) else None
        if not self.is_transient(error):
            raise _give_up(error, attempt, "not_retried", asked)
        if attempt > self.max_retries:
            raise _give_up(error, attempt, "attempts", asked)
        if asked is not None and math.isfinite(asked):
            if asked > self.max_retry_after:
                raise _give_up(error, attempt, "retry_after_too_long", asked)
            wait = max(asked, 0.0)
        else:
            wait = self.backoff(attempt)
        if wait >= remaining:
            raise _give_up(error, attempt, "out_of_time", asked)
        return wait


def _give_up(error: Exception, attempts: int, reason: str, asked: float | None) -> Exception:
    setattr(error, _RECORD_ATTRIBUTE, RetryRecord(attempts, reason, asked))
    return error


@dataclass
class ProviderRetries(AbstractCapability[Any]):
    """The policy as a pydantic-ai capability: add it to a run whose model is a provider's
    (``capabilities=[ProviderRetries(RetryPolicy(timeout))]``). It sets each attempt's
    timeouts from what is left of the budget and decides, on an attempt's failure, whether
    to wait and send the request again."""

    policy: RetryPolicy
    _deadline: float = dataclasses.field(default=math.inf, init=False, repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # built in code, never from an agent spec

    async def for_run(self, ctx: RunContext[Any]) -> ProviderRetries:
        return ProviderRetries(self.policy)  # its deadline belongs to one run's requests

    async def wrap_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        handler: WrapModelRequestHandler,
    ) -> ModelResponse:
        # A run's requests are sequential: one deadline at a time.
        self._deadline = time.monotonic() + self.policy.timeout_seconds
        return await handler(request_context)

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        settings = self.policy.attempt_settings(
            self._remaining(),
            streaming=request_context.streaming,
            base=request_context.model_settings,
        )
        return dataclasses.replace(request_context, model_settings=settings)

    async def on_model_request_error(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        error: Exception,
    ) -> ModelResponse:
        wait = self.policy.wait_before_retry(error, request_context.attempt, self._remaining())
        await asyncio.sleep(wait)
        raise RetryModelRequest()

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()


def retry_capabilities(
    resolved: ResolvedModel, timeout_seconds: float
) -> list[AbstractCapability[Any]]:
    """The capabilities a run of ``resolved`` gets: the retry policy for a provider's model,
    nothing for a test's override (its failures are the test's script, taken as they come)."""
    if not resolved.from_provider:
        return []
    return [ProviderRetries(RetryPolicy(timeout_seconds))]
