"""The LLM layer: providers, roles, credentials, usage, and the gateway that runs agents."""

from scholarstream.llm._capabilities import (
    STRUCTURED_OUTPUTS,
    ModelCapabilities,
    StructuredOutput,
    output_spec,
)
from scholarstream.llm._credentials import CredentialStore, StoredKeyInfo
from scholarstream.llm._gateway import LLMGateway
from scholarstream.llm._model_errors import MODEL_FAILURES, ModelFailure, model_error
from scholarstream.llm._providers import (
    Credential,
    ProviderSpec,
    get_provider,
    register_provider,
    registered_providers,
    split_model_string,
)
from scholarstream.llm._retries import (
    MAX_RETRIES,
    MAX_RETRY_AFTER_SECONDS,
    ProviderRetries,
    RetryPolicy,
    RetryRecord,
    retry_capabilities,
    retry_record,
)
from scholarstream.llm._roles import (
    DEFAULT_ROLE,
    KNOWN_ROLES,
    ModelRegistry,
    ResolvedModel,
    RoleStatus,
)
from scholarstream.llm._usage import UsageTotal, estimate_cost, record_usage, usage_totals

__all__ = [
    "DEFAULT_ROLE",
    "KNOWN_ROLES",
    "MAX_RETRIES",
    "MAX_RETRY_AFTER_SECONDS",
    "MODEL_FAILURES",
    "STRUCTURED_OUTPUTS",
    "Credential",
    "CredentialStore",
    "LLMGateway",
    "ModelCapabilities",
    "ModelFailure",
    "ModelRegistry",
    "ProviderRetries",
    "ProviderSpec",
    "ResolvedModel",
    "RetryPolicy",
    "RetryRecord",
    "RoleStatus",
    "StoredKeyInfo",
    "StructuredOutput",
    "UsageTotal",
    "estimate_cost",
    "get_provider",
    "model_error",
    "output_spec",
    "record_usage",
    "register_provider",
    "registered_providers",
    "retry_capabilities",
    "retry_record",
    "split_model_string",
    "usage_totals",
]
