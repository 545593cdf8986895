"""The LLM layer: providers, roles, credentials, usage, and the gateway that runs agents."""

from scholarstream.llm._calls import ModelCall, answer_budget, log_model_failure
from scholarstream.llm._capabilities import (
    STRUCTURED_OUTPUTS,
    ModelCapabilities,
    StructuredOutput,
    output_spec,
)
from scholarstream.llm._capability_errors import (
    Capability,
    missing_capability,
    provider_message,
    register_capability_pattern,
)
from scholarstream.llm._check import (
    CheckName,
    CheckReport,
    CheckStep,
    check_model,
    list_endpoint_models,
)
from scholarstream.llm._choices import (
    ChoiceSource,
    EndpointInput,
    ModelChoices,
    RoleChoice,
    UserEndpoint,
)
from scholarstream.llm._credentials import CredentialStore, StoredKeyInfo
from scholarstream.llm._gateway import LLMGateway
from scholarstream.llm._model_errors import MODEL_FAILURES, ModelFailure, model_error
from scholarstream.llm._providers import (
    LOCAL_ANSWER_BUDGETS,
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
from scholarstream.llm._setup_check import check_and_record, check_summary
from scholarstream.llm._usage import UsageTotal, estimate_cost, record_usage, usage_totals

__all__ = [
    "DEFAULT_ROLE",
    "KNOWN_ROLES",
    "LOCAL_ANSWER_BUDGETS",
    "MAX_RETRIES",
    "MAX_RETRY_AFTER_SECONDS",
    "MODEL_FAILURES",
    "STRUCTURED_OUTPUTS",
    "Capability",
    "CheckName",
    "CheckReport",
    "CheckStep",
    "ChoiceSource",
    "Credential",
    "CredentialStore",
    "EndpointInput",
    "LLMGateway",
    "ModelCall",
    "ModelCapabilities",
    "ModelChoices",
    "ModelFailure",
    "ModelRegistry",
    "ProviderRetries",
    "ProviderSpec",
    "ResolvedModel",
    "RetryPolicy",
    "RetryRecord",
    "RoleChoice",
    "RoleStatus",
    "StoredKeyInfo",
    "StructuredOutput",
    "UsageTotal",
    "UserEndpoint",
    "answer_budget",
    "check_and_record",
    "check_model",
    "check_summary",
    "estimate_cost",
    "get_provider",
    "list_endpoint_models",
    "log_model_failure",
    "missing_capability",
    "model_error",
    "output_spec",
    "provider_message",
    "record_usage",
    "register_capability_pattern",
    "register_provider",
    "registered_providers",
    "retry_capabilities",
    "retry_record",
    "split_model_string",
    "usage_totals",
]
