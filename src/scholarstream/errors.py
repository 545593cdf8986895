"""One exception tree for the whole product. Every message says what to do next.

    ScholarStreamError               (500 internal_error)
    ├── ConfigurationError           (500 configuration_error)     settings are wrong
    ├── InvalidInputError            (422 invalid_input)           request, argument, file wrong
    ├── NotFoundError                (404 not_found)               missing, or owned by someone else
    ├── ConflictError                (409 conflict)                resource in the wrong state
    ├── AuthenticationError          (401 not_authenticated)       no or bad credentials
    ├── PermissionDeniedError        (403 permission_denied)       authenticated, but not allowed
    ├── RateLimitedError             (429 rate_limited)            too many attempts: wait
    ├── LLMError                     (502 llm_error)               a model call failed
    │   ├── OfflineModeError         (503 offline_mode)            no model configured for the role
    │   ├── MissingCredentialsError  (400 missing_credentials)     no API key for the provider
    │   ├── ApiKeyInvalidError       (502 api_key_invalid)         the provider refused the key
    │   ├── ModelCapabilityError     (502 model_capability)        the server cannot do what was
    │   │                                                          asked (tools, JSON schema, this
    │   │                                                          much context): not retried
    │   └── UnknownProviderError     (400 unknown_provider)        model string names no provider
    ├── SourceError                  (502 source_error)            a literature source failed
    │   ├── SourceUnavailableError   (503 source_unavailable)      down, rate-limited, timing out
    │   ├── SourceCredentialsError   (502 source_credentials)      its API key is missing or refused
    │   └── SourceQueryError         (422 bad_query)               it refused the query
    ├── DatabaseUnavailableError     (503 database_unavailable)    cannot connect to the database
    ├── DatabaseBusyError            (503 database_busy)           another writer held it: retry
    └── EngineError                  (503 engine_unavailable)      durable engine not running

The API turns any of these into the one error body (``api.errors.ErrorBody``); the CLI
prints message and hint and exits non-zero. Code that catches one decides what it means;
nothing catches, logs and returns None.
"""

from __future__ import annotations

from typing import ClassVar


class ScholarStreamError(Exception):
    code: ClassVar[str] = "internal_error"
    http_status: ClassVar[int] = 500
    default_hint: ClassVar[str | None] = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message

    @property
    def response_headers(self) -> dict[str, str]:
        """HTTP headers the API adds to this error's response."""
        return {}


class ConfigurationError(ScholarStreamError):
    code = "configuration_error"


class InvalidInputError(ScholarStreamError):
    code = "invalid_input"
    http_status = 422


class NotFoundError(ScholarStreamError):
    code = "not_found"
    http_status = 404


class ConflictError(ScholarStreamError):
    code = "conflict"
    http_status = 409


class AuthenticationError(ScholarStreamError):
    code = "not_authenticated"
    http_status = 401
    default_hint = (
        "Log in through the web UI, or send 'Authorization: Bearer <token>' with a token "
        "from 'scholarstream tokens create'."
    )


class PermissionDeniedError(ScholarStreamError):
    code = "permission_denied"
    http_status = 403


class RateLimitedError(ScholarStreamError):
    code = "rate_limited"
    http_status = 429

    def __init__(self, message: str, *, retry_after_seconds: int, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after_seconds = retry_after_seconds

    @property
    def response_headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_seconds)}


class LLMError(ScholarStreamError):
    code = "llm_error"
    http_status = 502


class OfflineModeError(LLMError):
    code = "offline_mode"
    http_status = 503
    default_hint = (
        "Configure a model, e.g. SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini with "
        "OPENAI_API_KEY set, then restart. 'scholarstream models' shows what is configured."
    )


class MissingCredentialsError(LLMError):
    code = "missing_credentials"
    http_status = 400


class ApiKeyInvalidError(LLMError):
    code = "api_key_invalid"


class ModelCapabilityError(LLMError):
    """The model's server refused the request for something it cannot do: tool calling
    (llama-server without ``--jinja``), JSON-schema output, or a prompt longer than its
    context. Sending it again fails again, so it is never retried; a feature with an offline
    counterpart falls back, and the hint says what to change (a server flag, the provider's
    ``structured_output`` / ``supports_tools`` setting, another model)."""

    code = "model_capability"

    def __init__(self, message: str, *, capability: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.capability = capability
        """What the server lacks: ``tools``, ``json_schema`` or ``context``."""


class UnknownProviderError(LLMError):
    code = "unknown_provider"
    http_status = 400


class SourceError(ScholarStreamError):
    code = "source_error"
    http_status = 502

    def __init__(self, source: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.source = source


class SourceUnavailableError(SourceError):
    code = "source_unavailable"
    http_status = 503
    default_hint = "The source is down or rate-limiting us; try again in a few minutes."


class SourceCredentialsError(SourceError):
    code = "source_credentials"
    http_status = 502


class SourceQueryError(SourceError):
    code = "bad_query"
    http_status = 422
    default_hint = "Check the query syntax: 'scholarstream sources list' describes each source's."


class DatabaseUnavailableError(ScholarStreamError):
    code = "database_unavailable"
    http_status = 503
    default_hint = (
        "Check SCHOLARSTREAM_DATABASE_URL (or the data directory's permissions) and that the "
        "database server is running."
    )


class DatabaseBusyError(ScholarStreamError):
    """The database refused a write because another writer held it for longer than the
    wait allowed (SQLite's lock, a PostgreSQL lock timeout, deadlock or serialization
    failure). The transaction was rolled back: nothing of it is stored, so sending the same
    request again is safe. The API answers 503 with ``Retry-After``."""

    code = "database_busy"
    http_status = 503
    default_hint = (
        "Nothing was saved. Send the same request again in a few seconds; if it keeps "
        "happening, a long task (an import, another ScholarStream process) is holding the "
        "database: wait for it to finish."
    )

    def __init__(
        self,
        message: str = "The database is busy with another write.",
        *,
        retry_after_seconds: int = 2,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.retry_after_seconds = retry_after_seconds

    @property
    def response_headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_seconds)}


class EngineError(ScholarStreamError):
    code = "engine_unavailable"
    http_status = 503
