"""A model call's failure as the product's ``LLMError``: which model, what went wrong, how
often it was tried (``retries.retry_record``), and what the user can do about it.

Product code catches ``MODEL_FAILURES`` around a pydantic-ai run and raises
``model_error(exc, resolved, timeout_seconds=...)`` from it."""

from __future__ import annotations

from typing import TypeGuard

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRequestTimeout,
    ModelTimeoutError,
    UnexpectedModelBehavior,
)

from scholarstream.errors import LLMError
from scholarstream.llm.retries import MAX_RETRY_AFTER_SECONDS, RetryRecord, retry_record
from scholarstream.llm.roles import ResolvedModel

__all__ = ["MODEL_FAILURES", "ModelFailure", "model_error"]

ModelFailure = ModelAPIError | UnexpectedModelBehavior
MODEL_FAILURES: tuple[type[ModelAPIError], type[UnexpectedModelBehavior]] = (
    ModelAPIError,
    UnexpectedModelBehavior,
)
"""What a pydantic-ai run raises when its model failed (``ModelHTTPError`` is one)."""


def model_error(
    exc: ModelFailure, resolved: ResolvedModel, *, timeout_seconds: float | None = None
) -> LLMError:
    """``exc`` as the product's ``LLMError``, with what to do about it. ``timeout_seconds``
    is the call's budget, named when the model did not answer within it."""
    model = resolved.model_string
    record = retry_record(exc)
    if isinstance(exc, (ModelRequestTimeout, ModelTimeoutError)):
        within = f" within {timeout_seconds:g} s" if timeout_seconds is not None else " in time"
        return LLMError(
            f"{model} did not answer{within}.",
            hint=f"The provider is slow or not responding: try again, or pick another model "
            f"than {model}. llm.timeout_seconds sets how long ScholarStream waits.",
        )
    if isinstance(exc, ModelQuotaExceededError):
        status = f" (HTTP {exc.status_code})" if isinstance(exc, ModelHTTPError) else ""
        return LLMError(
            f"{model} refused the request: the account's quota or credits are used up{status}.",
            hint=f"Waiting will not help: top up or raise the quota of the {resolved.provider} "
            f"account, or pick another model than {model}.",
        )
    if isinstance(exc, ModelHTTPError):
        return _http_error(exc, model, record, timeout_seconds)
    if isinstance(exc, ModelConnectionError):
        if exc.in_stream or exc.phase == "read":
            return LLMError(
                f"The connection to {model} broke off before its answer was complete"
                f"{_times(record)}.",
                hint=f"The provider or the network dropped the answer of {model}: try again.",
            )
        return LLMError(
            f"Could not reach {model}{_times(record)}: {exc.message}",
            hint=f"Check that the address of the {resolved.provider} provider (its base URL) "
            "is right and reachable from this server, then try again.",
        )
    if isinstance(exc, ModelAPIError):
        return LLMError(
            f"{model} failed{_times(record)}: {exc.message}",
            hint=f"Try again shortly, or pick another model than {model}.",
        )
    return LLMError(
        f"{model} gave an answer that could not be used: {exc.message}",
        hint="Try again, or configure a stronger model for this role.",
    )


def _times(record: RetryRecord | None) -> str:
    return f" ({record.attempts} attempts)" if _retried(record) else ""


def _http_error(
    exc: ModelHTTPError, model: str, record: RetryRecord | None, timeout: float | None
) -> LLMError:
    status = exc.status_code
    if status == 429:
        return LLMError(
            _rate_limited(model, record, timeout),
            hint=f"The provider is rate-limiting or out of quota: wait a few minutes and try "
            f"again, pick another model than {model}, or raise the provider's limit or quota.",
        )
    if status >= 500:
        tries = f", to all {record.attempts} attempts" if _retried(record) else ""
        return LLMError(
            f"{model} answered HTTP {status}, a failure of the provider's service{tries}.",
            hint=f"Try again shortly, or pick another model than {model}.",
        )
    return LLMError(f"{model} answered HTTP {status}.", hint=_hint_for_status(status, model))


def _retried(record: RetryRecord | None) -> TypeGuard[RetryRecord]:
    return record is not None and record.attempts > 1


def _rate_limited(model: str, record: RetryRecord | None, timeout: float | None) -> str:
    asked = record.retry_after if record is not None else None
    if record is not None and asked is not None:
        wait = f"{model} is rate-limiting requests (HTTP 429) and asked to wait {asked:g} s"
        if record.reason == "retry_after_too_long":
            return (
                f"{wait}; ScholarStream waits at most {MAX_RETRY_AFTER_SECONDS:g} s for a provider."
            )
        if record.reason == "out_of_time":
            budget = f" of the {timeout:g} s" if timeout is not None else ""
            return f"{wait}, longer than is left{budget} this call may take."
    if _retried(record):
        refused = f"it answered HTTP 429 to all {record.attempts} attempts"
        return f"{model} is rate-limiting requests: {refused}."
    return f"{model} is rate-limiting requests (HTTP 429)."


def _hint_for_status(status: int, model: str) -> str:
    hints: dict[int, str] = {
        401: "The API key was refused: update it under Settings or in the server configuration.",
        403: f"The key has no access to {model}: pick another model or check the account.",
        404: f"The provider does not know {model}: check the model string and the base URL.",
    }
    refused = f"The provider refused the request: try again, or pick another model than {model}."
    return hints.get(status, refused)
