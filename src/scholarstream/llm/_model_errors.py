"""A model call's failure as the product's ``LLMError``: which model, what went wrong, how
often it was tried (``retries.retry_record``), and what the user can do about it.

Product code catches ``MODEL_FAILURES`` around a pydantic-ai run and raises
``model_error(exc, resolved, timeout_seconds=...)`` from it.

What went wrong is read from the provider's own error, not from the HTTP status alone:
providers disagree on statuses (Google sends an invalid key as a 400 ``INVALID_ARGUMENT``
with the reason ``API_KEY_INVALID``, Anthropic exhausted credits as a 400, OpenAI an
exhausted quota as a 429 like a rate limit). pydantic-ai's model for each provider reads
the provider's error body into an error category (``ModelAuthenticationError``,
``ModelQuotaExceededError`` ...); the status is the fallback for an error without one.

=============================  ======================  ====================================
the provider said              code                    the user is told to
=============================  ======================  ====================================
the key is invalid             ``api_key_invalid``     update the provider's key
the key may not use the model  ``llm_error``           pick another model or check access
quota or credits used up       ``llm_error``           top up (waiting will not help)
no tool calling (``--jinja``)  ``model_capability``    start llama-server with --jinja, or
                                                       set supports_tools = false
no JSON-schema output          ``model_capability``    set structured_output = "tool" or
                                                       "prompted"
the input is too long          ``model_capability``    raise -c on the server, shorten it,
                                                       or a larger model
unknown model                  ``llm_error``           check the model string
rate limit                     ``llm_error``           wait, then try again
overloaded, unavailable, 5xx   ``llm_error``           try again shortly
no answer within the budget    ``llm_error``           (says whether anything came)
=============================  ======================  ====================================

Capability errors are recognised by the provider's message (``capability_errors``), before
the status: llama-server says it cannot call tools with an HTTP 500. Every message ends with
what the provider itself said (``The provider said: "..."``), so a server's own words (a
flag to set, a limit) reach the user; a timeout says whether nothing came ("did not answer
within N s") or the answer had started and then stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeGuard

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)

from scholarstream.errors import ApiKeyInvalidError, LLMError, ModelCapabilityError
from scholarstream.llm._capability_errors import (
    Capability,
    missing_capability,
    provider_message,
)
from scholarstream.llm._retries import MAX_RETRY_AFTER_SECONDS, RetryRecord, retry_record
from scholarstream.llm._roles import ResolvedModel

__all__ = ["MODEL_FAILURES", "ModelFailure", "model_error"]

ModelFailure = ModelAPIError | UnexpectedModelBehavior
MODEL_FAILURES: tuple[type[ModelAPIError], type[UnexpectedModelBehavior]] = (
    ModelAPIError,
    UnexpectedModelBehavior,
)
"""What a pydantic-ai run raises when its model failed (``ModelHTTPError`` is one)."""

Fault = Literal[
    "capability",
    "timed_out",
    "key_invalid",
    "no_access",
    "quota",
    "too_long",
    "unknown_model",
    "rate_limited",
    "overloaded",
    "server",
    "rejected",
    "connection",
    "failed",
    "unusable",
]

# The provider's category, most specific first (a categorised HTTP error is also a
# ``ModelHTTPError``, and an overloaded provider is also unavailable).
_CATEGORIES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Fault], ...] = (
    ((ModelRequestTimeout, ModelTimeoutError), "timed_out"),
    (ModelAuthenticationError, "key_invalid"),
    (ModelQuotaExceededError, "quota"),
    (ModelContextWindowExceededError, "too_long"),
    (ModelNotFoundError, "unknown_model"),
    (ModelRateLimitError, "rate_limited"),
    (ModelOverloadedError, "overloaded"),
    ((ModelUnavailableError, ModelServerError), "server"),
    (ModelRequestRejectedError, "rejected"),
)
# An HTTP error that came without a category (an OpenAI-compatible server, a test's model).
_STATUSES: dict[int, Fault] = {
    401: "key_invalid",
    402: "quota",
    403: "no_access",
    404: "unknown_model",
    413: "too_long",
    429: "rate_limited",
    529: "overloaded",
}


def fault_of(exc: ModelFailure) -> Fault:
    """What went wrong, as the provider said it."""
    if missing_capability(exc) is not None:
        return "capability"
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    for kind, fault in _CATEGORIES:
        if isinstance(exc, kind):
            # A 403 is a valid key without access to this model (or a guardrail).
            return "no_access" if fault == "key_invalid" and status == 403 else fault
    if status is not None:
        return _STATUSES.get(status, "server" if status >= 500 else "rejected")
    if isinstance(exc, ModelConnectionError):
        return "connection"
    return "failed" if isinstance(exc, ModelAPIError) else "unusable"


@dataclass(frozen=True)
class _Call:
    exc: ModelFailure
    resolved: ResolvedModel
    record: RetryRecord | None
    timeout: float | None

    @property
    def model(self) -> str:
        return self.resolved.model_string

    @property
    def provider(self) -> str:
        return self.resolved.provider

    @property
    def status(self) -> str:
        exc = self.exc
        return f" (HTTP {exc.status_code})" if isinstance(exc, ModelHTTPError) else ""

    @property
    def detail(self) -> str:
        return self.exc.message

    @property
    def in_stream(self) -> bool:
        return isinstance(self.exc, ModelAPIError) and self.exc.in_stream


def model_error(
    exc: ModelFailure, resolved: ResolvedModel, *, timeout_seconds: float | None = None
) -> LLMError:
    """``exc`` as the product's ``LLMError``, with what to do about it. ``timeout_seconds``
    is the call's budget, named when the model did not answer within it."""
    call = _Call(exc, resolved, retry_record(exc), timeout_seconds)
    fault = fault_of(exc)
    error = _DESCRIBE[fault](call)
    said = provider_message(exc) if fault not in _OWN_WORDS else None
    if said and said not in error.message:
        # The server's own words: a flag to set, a limit, what it could not parse.
        error.message = f'{error.message} The provider said: "{said}"'
        error.args = (error.message,)
    return error


# Faults whose message is the product's own account (a timeout has no provider words; a
# connection error's words are already in the message).
_OWN_WORDS: frozenset[Fault] = frozenset({"timed_out", "connection", "failed", "unusable"})


def _timed_out(call: _Call) -> LLMError:
    seconds = f" {call.timeout:g} s" if call.timeout is not None else ""
    if call.in_stream:
        message = f"{call.model} stopped answering: nothing more came for{seconds or ' too long'}"
        message += " after its answer had started, so the answer is cut off."
    else:
        within = f" within{seconds}" if seconds else " in time"
        message = f"{call.model} did not answer{within}."
    return LLMError(
        message,
        hint=f"The provider is slow or not responding: try again, or pick another model "
        f"than {call.model}. llm.timeout_seconds sets how long ScholarStream waits.",
    )


_CAPABILITY_HINTS: dict[Capability, tuple[str, str]] = {
    "tools": (
        "{model} cannot call tools as its server runs{status}.",
        "Start llama-server with --jinja (its chat template then knows tools), or choose a "
        "model that supports tools; or, for the {provider} provider in Settings, set "
        "supports_tools = false (chat then offers slash commands) and "
        'structured_output = "native".',
    ),
    "json_schema": (
        "{model} does not accept a JSON schema for its answer (response_format){status}.",
        'For the {provider} provider in Settings, set structured_output = "tool" (or '
        '"prompted" if it cannot call tools either), or choose another model. '
        "'scholarstream models --check' shows what it supports.",
    ),
    "context": (
        "The request is longer than {model} can read (its context window){status}.",
        "Shorten the message, start a new conversation, or use fewer or shorter documents; "
        "or raise the server's context size (llama-server -c 8192, Ollama num_ctx), or pick "
        "a model with a larger context window than {model}.",
    ),
}


def _capability(call: _Call) -> LLMError:
    capability = missing_capability(call.exc) or "context"
    message, hint = _CAPABILITY_HINTS[capability]
    fields = {"model": call.model, "provider": call.provider, "status": call.status}
    return ModelCapabilityError(
        message.format(**fields), capability=capability, hint=hint.format(**fields)
    )


def _key_invalid(call: _Call) -> LLMError:
    return ApiKeyInvalidError(
        f"The {call.provider} API key was refused for {call.model}.",
        hint=f"Update the {call.provider} API key under Settings (or in the server "
        "configuration), then try again: the same key will be refused again.",
    )


def _no_access(call: _Call) -> LLMError:
    return LLMError(
        f"{call.model} refused the request: the key has no access to it{call.status}.",
        hint=f"Pick another model than {call.model}, or give the {call.provider} account "
        "access to it.",
    )


def _quota(call: _Call) -> LLMError:
    return LLMError(
        f"{call.model} refused the request: the account's quota or credits are used up"
        f"{call.status}.",
        hint=f"Waiting will not help: top up or raise the quota of the {call.provider} "
        f"account, or pick another model than {call.model}.",
    )


def _too_long(call: _Call) -> LLMError:
    message, hint = _CAPABILITY_HINTS["context"]
    fields = {"model": call.model, "provider": call.provider, "status": call.status}
    return ModelCapabilityError(
        message.format(**fields), capability="context", hint=hint.format(**fields)
    )


def _unknown_model(call: _Call) -> LLMError:
    return LLMError(
        f"The provider does not know {call.model}{call.status}.",
        hint=f"Check the model string {call.model} and the {call.provider} provider's base URL.",
    )


def _rate_limited(call: _Call) -> LLMError:
    return LLMError(
        _rate_limit_message(call.model, call.record, call.timeout),
        hint=f"The provider is rate-limiting: wait a few minutes and try again, pick "
        f"another model than {call.model}, or raise the provider's limit.",
    )


def _overloaded(call: _Call) -> LLMError:
    return LLMError(
        f"{call.model} is overloaded{call.status}{_to_all(call.record)}.",
        hint=f"The provider is busy, not your request: try again in a few minutes, or "
        f"pick another model than {call.model}.",
    )


def _server(call: _Call) -> LLMError:
    status = call.status.strip(" ()") or "an error"
    return LLMError(
        f"{call.model} answered {status}, a failure of the provider's service"
        f"{_to_all(call.record)}.",
        hint=f"Try again shortly, or pick another model than {call.model}.",
    )


def _rejected(call: _Call) -> LLMError:
    status = call.status.strip(" ()") or "an error"
    return LLMError(
        f"{call.model} refused the request ({status}).",
        hint=f"The provider refused the request: try again, or pick another model than "
        f"{call.model}.",
    )


def _connection(call: _Call) -> LLMError:
    exc = call.exc
    if isinstance(exc, ModelConnectionError) and (exc.in_stream or exc.phase == "read"):
        return LLMError(
            f"The connection to {call.model} broke off before its answer was complete"
            f"{_times(call.record)}.",
            hint=f"The provider or the network dropped the answer of {call.model}: try again.",
        )
    return LLMError(
        f"Could not reach {call.model}{_times(call.record)}: {call.detail}",
        hint=f"Check that the address of the {call.provider} provider (its base URL) "
        "is right and reachable from this server, then try again.",
    )


def _failed(call: _Call) -> LLMError:
    return LLMError(
        f"{call.model} failed{_times(call.record)}: {call.detail}",
        hint=f"Try again shortly, or pick another model than {call.model}.",
    )


def _unusable(call: _Call) -> LLMError:
    return LLMError(
        f"{call.model} gave an answer that could not be used: {call.detail}",
        hint="Try again, or configure a stronger model for this role.",
    )


_DESCRIBE: dict[Fault, Callable[[_Call], LLMError]] = {
    "capability": _capability,
    "timed_out": _timed_out,
    "key_invalid": _key_invalid,
    "no_access": _no_access,
    "quota": _quota,
    "too_long": _too_long,
    "unknown_model": _unknown_model,
    "rate_limited": _rate_limited,
    "overloaded": _overloaded,
    "server": _server,
    "rejected": _rejected,
    "connection": _connection,
    "failed": _failed,
    "unusable": _unusable,
}


def _times(record: RetryRecord | None) -> str:
    return f" ({record.attempts} attempts)" if _retried(record) else ""


def _to_all(record: RetryRecord | None) -> str:
    return f", to all {record.attempts} attempts" if _retried(record) else ""


def _retried(record: RetryRecord | None) -> TypeGuard[RetryRecord]:
    return record is not None and record.attempts > 1


def _rate_limit_message(model: str, record: RetryRecord | None, timeout: float | None) -> str:
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
