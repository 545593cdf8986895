"""What a model's server can do, and how the product asks it for structured output.

Each provider kind has a default (``ProviderSpec.capabilities``); the server's settings
(``[llm.providers.NAME]``) and a user's own endpoint override it; ``scholarstream models
--check`` and the web UI's "Test" detect it.

================  ===========================================================================
structured_output how a typed answer is requested
================  ===========================================================================
``native``        ``response_format`` with the JSON schema, no tools (OpenAI-compatible local
                  servers: llama.cpp, Ollama, vLLM, LM Studio)
``tool``          a ``final_result`` tool the model must call (the cloud providers)
``prompted``      the schema in the instructions, the answer parsed as JSON (a server that
                  supports neither)
================  ===========================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic_ai import NativeOutput, PromptedOutput, ToolOutput

__all__ = [
    "STRUCTURED_OUTPUTS",
    "ModelCapabilities",
    "StructuredOutput",
    "output_spec",
]

StructuredOutput = Literal["native", "tool", "prompted"]
STRUCTURED_OUTPUTS: tuple[str, ...] = get_args(StructuredOutput)


@dataclass(frozen=True)
class ModelCapabilities:
    structured_output: StructuredOutput = "tool"
    supports_tools: bool = True
    """``False``: chat answers in text and offers the slash commands instead of tools."""
    compact_prompt: bool = False
    """A short system prompt (local models on a CPU pay for every prompt token)."""
    streamed_requests: bool = False
    """Every request is streamed, typed answers too: a local server on a CPU writes a long
    answer for minutes and sends nothing of a non-streamed one until it is whole, so the
    per-read timeout (``llm.timeout_seconds``) would end it; streamed, the timeout bounds
    each wait for the next tokens and ``llm.deadline_seconds`` the whole answer."""
    max_tokens: Mapping[str, int] = field(default_factory=dict)
    """Per-feature overrides of ``llm.max_tokens`` for this provider."""
    default_max_tokens: Mapping[str, int] = field(default_factory=dict)
    """The provider kind's budgets, under the server's ``llm.max_tokens`` and over the
    built-in ones (a local server's long answers fit the deadline at a CPU's speed)."""

    def replace(self, **changes: Any) -> ModelCapabilities:
        """A copy with the changes that are not ``None`` (an unset override keeps the default)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


def output_spec(output_type: Any, capabilities: ModelCapabilities) -> Any:
    """``output_type`` as the run asks for it from this model. Plain text stays text."""
    if output_type is str:
        return str
    wrap = {"native": NativeOutput, "tool": ToolOutput, "prompted": PromptedOutput}
    return wrap[capabilities.structured_output](output_type)
