"""The LLM layer: providers, roles, credentials, usage, and the gateway that runs agents."""

from scholarstream.llm.credentials import CredentialStore, StoredKeyInfo
from scholarstream.llm.gateway import LLMGateway, model_error
from scholarstream.llm.providers import (
    Credential,
    ProviderSpec,
    get_provider,
    register_provider,
    registered_providers,
    split_model_string,
)
from scholarstream.llm.roles import (
    DEFAULT_ROLE,
    KNOWN_ROLES,
    ModelRegistry,
    ResolvedModel,
    RoleStatus,
)
from scholarstream.llm.usage import UsageTotal, estimate_cost, record_usage, usage_totals

__all__ = [
    "DEFAULT_ROLE",
    "KNOWN_ROLES",
    "Credential",
    "CredentialStore",
    "LLMGateway",
    "ModelRegistry",
    "ProviderSpec",
    "ResolvedModel",
    "RoleStatus",
    "StoredKeyInfo",
    "UsageTotal",
    "estimate_cost",
    "get_provider",
    "model_error",
    "record_usage",
    "register_provider",
    "registered_providers",
    "split_model_string",
    "usage_totals",
]
