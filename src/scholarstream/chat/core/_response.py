"""The finished answer of one turn (the seed's ``ChatResponsePayload``) and its parts."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue

from scholarstream.chat.continuity import ContinuityReport, SuggestedValue
from scholarstream.chat.core._payloads import CustomPayload
from scholarstream.grounding.core import CitationAudit
from scholarstream.search.core import ModelFallback


class SuggestedAction(BaseModel):
    """A button: ``client`` actions run in the page, ``server`` actions are posted to
    ``/api/v1/chat/actions/{action}``."""

    label: str = Field(min_length=1, max_length=120)
    action: str = Field(min_length=1, max_length=80)
    handler: Literal["client", "server"]
    params: dict[str, JsonValue] = Field(default_factory=dict)


class ToolHistoryEntry(BaseModel):
    tool_name: str
    input: dict[str, Any]
    output: str = Field(description="What the model read of the run: not for display.")
    ok: bool = True
    shown: str | None = Field(
        default=None,
        description="What a person reads of the run (the tool's line in the answer); None "
        "when the answer itself says it.",
    )


class ChatResponsePayload(BaseModel):
    message: str
    custom_payload: CustomPayload | None = None
    payloads: list[CustomPayload] = Field(
        default_factory=list,
        description="Every payload of the turn, tools' first; custom_payload is the LLM's "
        "payload if it gave one, else the last tool's.",
    )
    suggested_values: list[SuggestedValue] = Field(default_factory=list)
    suggested_actions: list[SuggestedAction] = Field(default_factory=list)
    tool_history: list[ToolHistoryEntry] = Field(default_factory=list)
    conversation_id: uuid.UUID | None = None
    message_id: uuid.UUID | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="What was dropped from the answer (a malformed payload, an unknown action).",
    )
    fallback: ModelFallback | None = Field(
        default=None,
        description="Set when the model did not finish the answer (it failed, was cut off by "
        "the deadline or the answer budget, or only repeated its tool calls) and the turn "
        "completed with what the tools returned; skill 'chat'. None: the model answered.",
    )
    citations: CitationAudit | None = Field(
        default=None,
        description="The answer's citations of the records the conversation's tools showed "
        "(keys hold for the whole conversation), each checked against the record "
        "(supported, weak, unsupported, invalid), and references it "
        "wrote itself (unverified); message shows them marked. None: nothing was cited.",
    )
    continuity: ContinuityReport | None = Field(
        default=None,
        description="How the message was read against the conversation, the refined query, "
        "the exact queries sent to each tool and source, and the objective list.",
    )
