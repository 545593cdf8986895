"""Provider errors as each provider really sends them: the error bodies (and statuses) that
OpenAI, Anthropic and Google document for an invalid key, an exhausted quota, a rate limit,
an overloaded service and a request longer than the model's context window, served from a
loopback server to the real client stack (the product's model registry, pydantic-ai's model,
the provider's SDK). Each becomes the error the user needs: a refused key says to update
the key (``api_key_invalid``), never just to try again.

Bodies recorded from the providers' documentation of their error shapes:
OpenAI https://platform.openai.com/docs/guides/error-codes,
Anthropic https://docs.anthropic.com/en/api/errors,
Google https://ai.google.dev/gemini-api/docs/troubleshooting and
https://cloud.google.com/apis/design/errors (``google.rpc.ErrorInfo``, ``QuotaFailure``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest
from pydantic_ai import Agent

from scholarstream.db import OwnerScope, upgrade
from scholarstream.errors import LLMError
from scholarstream.research import ask_model
from scholarstream.research.core import is_api_key_error
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user


@dataclass(frozen=True)
class Recorded:
    """One error response as the provider sends it."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class ProviderServer:
    """Answers every request with the recorded error it is given, and counts requests."""

    def __init__(self) -> None:
        self.reply = Recorded(500, {})
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                payload = json.dumps(server.reply.body).encode()
                self.send_response(server.reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in server.reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def answer(self, reply: Recorded) -> None:
        self.reply, self.requests = reply, 0


@pytest.fixture(scope="module")
def provider_server() -> Iterator[ProviderServer]:
    server = ProviderServer()
    thread = threading.Thread(target=server.http.serve_forever, daemon=True)
    thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


# --- OpenAI -------------------------------------------------------------------------------

OPENAI_INVALID_KEY = Recorded(
    401,
    {
        "error": {
            "message": "Incorrect API key provided: sk-abc123*****************xyz9. You can "
            "find your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    },
)
OPENAI_QUOTA = Recorded(
    429,
    {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    },
)
OPENAI_RATE_LIMIT = Recorded(
    429,
    {
        "error": {
            "message": "Rate limit reached for gpt-4.1-mini in organization org-ab12cd34 on "
            "requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. "
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
)
OPENAI_OVERLOADED = Recorded(
    503,
    {
        "error": {
            "message": "The engine is currently overloaded, please try again later.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    },
)
OPENAI_TOO_LONG = Recorded(
    400,
    {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 131072 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
)

# --- Anthropic ----------------------------------------------------------------------------


def _anthropic(status: int, error_type: str, message: str) -> Recorded:
    return Recorded(
        status,
        {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        },
    )


ANTHROPIC_INVALID_KEY = _anthropic(401, "authentication_error", "invalid x-api-key")
ANTHROPIC_QUOTA = _anthropic(
    400,
    "invalid_request_error",
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
    "Billing to upgrade or purchase credits.",
)
ANTHROPIC_RATE_LIMIT = _anthropic(
    429,
    "rate_limit_error",
    "Number of request tokens has exceeded your per-minute rate limit "
    "(https://docs.anthropic.com/en/api/rate-limits); see the response headers for current "
    "usage. Please reduce the prompt length or the maximum tokens requested, or try again "
    "later.",
)
ANTHROPIC_OVERLOADED = _anthropic(529, "overloaded_error", "Overloaded")
ANTHROPIC_TOO_LONG = _anthropic(
    400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
)

# --- Google (Gemini API) ------------------------------------------------------------------


def _google(status: int, code: str, message: str, *details: dict[str, Any]) -> Recorded:
    error: dict[str, Any] = {"code": status, "message": message, "status": code}
    if details:
        error["details"] = list(details)
    return Recorded(status, {"error": error})


GOOGLE_INVALID_KEY = _google(
    400,
    "INVALID_ARGUMENT",
    "API key not valid. Please pass a valid API key.",
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    },
    {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": "API key not valid. Please pass a valid API key.",
    },
)


def _google_exhausted(quota_id: str, limit: str) -> Recorded:
    return _google(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details. For "
        "more information on this error, head to: "
        "https://ai.google.dev/gemini-api/docs/rate-limits.",
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [
                {
                    "quotaMetric": "generativelanguage.googleapis.com/"
                    "generate_content_free_tier_requests",
                    "quotaId": quota_id,
                    "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
                    "quotaValue": limit,
                }
            ],
        },
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [
                {
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                }
            ],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "14s"},
    )


GOOGLE_QUOTA = _google_exhausted("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250")
GOOGLE_RATE_LIMIT = _google_exhausted("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10")
GOOGLE_OVERLOADED = _google(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
GOOGLE_TOO_LONG = _google(
    400,
    "INVALID_ARGUMENT",
    "The input token count (1196662) exceeds the maximum number of tokens allowed (1048575).",
)

MODELS = {
    "openai": "openai:gpt-4.1-mini",
    "anthropic": "anthropic:claude-sonnet-4-6",
    "google": "google-gla:gemini-2.5-flash",
}
CASES: dict[str, dict[str, Recorded]] = {
    "openai": {
        "invalid_key": OPENAI_INVALID_KEY,
        "quota": OPENAI_QUOTA,
        "rate_limit": OPENAI_RATE_LIMIT,
        "overloaded": OPENAI_OVERLOADED,
        "too_long": OPENAI_TOO_LONG,
    },
    "anthropic": {
        "invalid_key": ANTHROPIC_INVALID_KEY,
        "quota": ANTHROPIC_QUOTA,
        "rate_limit": ANTHROPIC_RATE_LIMIT,
        "overloaded": ANTHROPIC_OVERLOADED,
        "too_long": ANTHROPIC_TOO_LONG,
    },
    "google": {
        "invalid_key": GOOGLE_INVALID_KEY,
        "quota": GOOGLE_QUOTA,
        "rate_limit": GOOGLE_RATE_LIMIT,
        "overloaded": GOOGLE_OVERLOADED,
        "too_long": GOOGLE_TOO_LONG,
    },
}
TIMEOUT_SECONDS = 5.0


ROLES = {"openai": "default", "anthropic": "synthesis", "google": "fast"}


@pytest.fixture
def recorded_settings(
    provider_server: ProviderServer, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """Each provider's base URL at the loopback server, one role per provider; real model
    requests allowed (they can only reach loopback: tests/conftest.py guards sockets)."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    url = provider_server.url
    settings = load_settings(
        data_dir=data_dir,
        llm={
            "roles": {role: MODELS[provider] for provider, role in ROLES.items()},
            "timeout_seconds": TIMEOUT_SECONDS,
            "providers": {
                "openai": {"api_key": "sk-recorded", "base_url": f"{url}/v1"},
                "anthropic": {"api_key": "sk-ant-recorded", "base_url": url},
                "google": {"api_key": "AIza-recorded", "base_url": url},
            },
        },
    )
    upgrade(settings.app_database_url)
    return settings


async def _errors_of(
    provider_server: ProviderServer, settings: Settings, provider: str
) -> dict[str, tuple[LLMError, int]]:
    """Each recorded error of ``provider`` as the product reports it, with the number of
    requests the product sent for it."""
    runtime = make_runtime(settings)
    errors: dict[str, tuple[LLMError, int]] = {}
    try:
        user = await new_user(runtime)
        for case, reply in CASES[provider].items():
            provider_server.answer(reply)
            async with runtime.database.session() as session:
                with pytest.raises(LLMError) as caught:
                    await runtime.llm.run(
                        Agent(),
                        "hi",
                        scope=OwnerScope(session, user.id),
                        feature="chat",
                        role=ROLES[provider],
                    )
            errors[case] = (caught.value, provider_server.requests)
    finally:
        await runtime.close()
    return errors


@pytest.mark.parametrize("provider", list(MODELS))
async def test_recorded_provider_errors_are_classified_with_what_to_do(
    provider: str, provider_server: ProviderServer, recorded_settings: Settings
) -> None:
    model = MODELS[provider]
    errors = await _errors_of(provider_server, recorded_settings, provider)

    key, sent = errors["invalid_key"]
    assert key.code == "api_key_invalid", key.message
    assert key.message.startswith(f"The {provider} API key was refused for {model}.")
    assert key.hint is not None and key.hint.startswith(f"Update the {provider} API key")
    assert "try again" not in key.hint.lower().split(", then")[0]
    assert sent == 1  # the same key would be refused again

    quota, sent = errors["quota"]
    assert quota.code == "llm_error"
    assert "quota or credits are used up" in quota.message
    assert quota.hint is not None and quota.hint.startswith("Waiting will not help")
    assert sent == 1

    rate, sent = errors["rate_limit"]
    assert rate.code == "llm_error"
    assert "is rate-limiting requests" in rate.message
    assert rate.hint is not None and "wait" in rate.hint
    # Retried, unless the provider asked for a wait longer than the call's budget.
    assert sent == (1 if provider == "google" else 3)
    if provider == "google":
        assert "asked to wait 14 s" in rate.message

    busy, sent = errors["overloaded"]
    assert busy.code == "llm_error"
    assert busy.message.startswith(f"{model} is overloaded")
    assert busy.hint is not None and "try again" in busy.hint.lower()
    assert sent == 3

    long, sent = errors["too_long"]
    assert long.code == "model_capability"  # the server cannot read that much: not retried
    assert long.message.startswith(f"The request is longer than {model} can read")
    assert long.hint is not None and long.hint.startswith("Shorten")
    assert "try again" not in long.hint.lower()
    assert sent == 1

    # No library internals in what the user reads, and the provider's own words in it.
    for error, _ in errors.values():
        assert "The provider said: " in error.message, error.message
        text = f"{error.message} {error.hint}"
        for internal in ("ModelHTTPError", "status_code:", "body:", "{'error'", "Traceback"):
            assert internal not in text, text


async def test_a_refused_google_key_makes_research_ask_for_the_key_not_a_retry(
    provider_server: ProviderServer, recorded_settings: Settings
) -> None:
    """The reported case: Google's 400 ``API_KEY_INVALID`` in a research call is recorded as
    ``api_key_invalid``, so the research's error summary says to update the key."""
    provider_server.answer(GOOGLE_INVALID_KEY)
    runtime = make_runtime(recorded_settings)
    try:
        user = await new_user(runtime)
        outcome = await ask_model(
            user.id,
            MODELS["google"],
            "What is EGFR?",
            database=runtime.database,
            models=runtime.models,
            llm=runtime.llm,
            timeout_seconds=runtime.settings.llm.timeout_seconds,
        )
    finally:
        await runtime.close()
    assert outcome.error_code == "api_key_invalid"
    assert is_api_key_error(outcome.error_code)
    assert outcome.error is not None and "Update the google API key" in outcome.error
    assert provider_server.requests == 1
