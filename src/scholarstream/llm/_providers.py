"""Model providers by registration: each knows how to build a pydantic-ai model from a
model name and a credential. A provider name not registered here but configured with a
``base_url`` is treated as an OpenAI-compatible endpoint (vLLM, LM Studio, a gateway ...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic_ai.models import Model

from scholarstream.errors import UnknownProviderError
from scholarstream.llm._capabilities import ModelCapabilities


@dataclass(frozen=True)
class Credential:
    api_key: str | None
    base_url: str | None
    source: str  # "user", "server" or "none"


ModelBuilder = Callable[[str, Credential], Model]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    label: str
    build: ModelBuilder
    needs_api_key: bool = True
    default_base_url: str | None = None
    aliases: tuple[str, ...] = ()
    capabilities: ModelCapabilities = field(default_factory=ModelCapabilities)
    """What this kind of provider supports unless its settings or a check say otherwise."""


# An OpenAI-compatible local server (llama.cpp, Ollama, vLLM, LM Studio): JSON-schema output
# works where a forced tool call does not (a small model writes the call as text), and a
# CPU pays for every prompt token.
LOCAL_ANSWER_BUDGETS = {"research": 1000, "research.synthesis": 1500}
"""A CPU writes 5-20 tokens per second: the built-in 2,000 and 3,000 tokens of a research
answer and its synthesis would not fit ``llm.deadline_seconds`` (300 s); these do."""
LOCAL_SERVER = ModelCapabilities(
    structured_output="native",
    compact_prompt=True,
    streamed_requests=True,
    default_max_tokens=LOCAL_ANSWER_BUDGETS,
)


_REGISTRY: dict[str, ProviderSpec] = {}
_ALIASES: dict[str, str] = {}


def register_provider(spec: ProviderSpec) -> None:
    _REGISTRY[spec.name] = spec
    for alias in spec.aliases:
        _ALIASES[alias] = spec.name


def registered_providers() -> list[ProviderSpec]:
    return list(_REGISTRY.values())


def canonical_provider(name: str) -> str:
    return _ALIASES.get(name, name)


def get_provider(name: str, *, configured_base_url: str | None = None) -> ProviderSpec:
    name = canonical_provider(name)
    if name in _REGISTRY:
        return _REGISTRY[name]
    if configured_base_url:
        return ProviderSpec(
            name=name,
            label=f"{name} (OpenAI-compatible)",
            build=_openai_chat,
            needs_api_key=False,
            capabilities=LOCAL_SERVER,
        )
    known = ", ".join(sorted(_REGISTRY))
    raise UnknownProviderError(
        f"Unknown model provider {name!r}.",
        hint=f"Use one of {known}, or configure an OpenAI-compatible endpoint with "
        f"SCHOLARSTREAM_LLM__PROVIDERS__{name.upper()}__BASE_URL.",
    )


def split_model_string(model_string: str) -> tuple[str, str]:
    """'openai:gpt-4.1-mini' -> ('openai', 'gpt-4.1-mini')."""
    provider, sep, model_name = model_string.partition(":")
    if not sep or not provider or not model_name:
        raise UnknownProviderError(
            f"Model {model_string!r} does not name its provider.",
            hint="Write models as 'provider:model', "
            "e.g. 'openai:gpt-4.1-mini' or 'ollama:llama3.1'.",
        )
    return canonical_provider(provider), model_name


OPENAI_API_HOST = "api.openai.com"


def _openai_chat(model_name: str, credential: Credential) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai import OpenAIProvider

    # Local servers such as Ollama accept any key; the OpenAI client insists on one.
    provider = OpenAIProvider(base_url=credential.base_url, api_key=credential.api_key or "unused")
    base_url = credential.base_url
    if base_url is None or OPENAI_API_HOST in base_url:
        return OpenAIChatModel(model_name, provider=provider)
    # Anything but OpenAI itself (llama-server, Ollama, vLLM, LM Studio, OpenRouter) gets the
    # answer budget as ``max_tokens``, the field every OpenAI-compatible server reads; OpenAI's
    # newer ``max_completion_tokens`` is ignored or refused by some of them.
    profile = OpenAIModelProfile(openai_chat_supports_max_completion_tokens=False)
    return OpenAIChatModel(model_name, provider=provider, profile=profile)


def _anthropic(model_name: str, credential: Credential) -> Model:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(api_key=credential.api_key, base_url=credential.base_url)
    return AnthropicModel(model_name, provider=provider)


def _google(model_name: str, credential: Credential) -> Model:
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    provider = GoogleProvider(api_key=credential.api_key, base_url=credential.base_url)
    return GoogleModel(model_name, provider=provider)


register_provider(ProviderSpec("openai", "OpenAI", _openai_chat))
register_provider(ProviderSpec("anthropic", "Anthropic", _anthropic))
register_provider(
    ProviderSpec("google", "Google Gemini", _google, aliases=("google-gla", "gemini"))
)
register_provider(
    ProviderSpec(
        "ollama",
        "Ollama (local)",
        _openai_chat,
        needs_api_key=False,
        default_base_url="http://127.0.0.1:11434/v1",
        capabilities=LOCAL_SERVER,
    )
)
register_provider(
    ProviderSpec(
        "openrouter", "OpenRouter", _openai_chat, default_base_url="https://openrouter.ai/api/v1"
    )
)
