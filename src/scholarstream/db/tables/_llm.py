"""Users' own provider keys (encrypted), their model choices and endpoints, and the usage
ledger of model calls."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class ProviderKey(Owned, CreatedAtMixin, Base):
    __tablename__ = "provider_keys"
    __table_args__ = (UniqueConstraint("owner_id", "provider"),)

    provider: Mapped[str] = mapped_column(String(64))
    # Fernet token made with the server secret; never returned by the API.
    ciphertext: Mapped[str] = mapped_column(Text)


class LLMUsage(Owned, CreatedAtMixin, Base):
    """One row per model run: who, what for, which model, tokens and cost."""

    __tablename__ = "llm_usage"

    feature: Mapped[str] = mapped_column(String(64), index=True)
    role: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(200))
    provider: Mapped[str] = mapped_column(String(64))
    credential_source: Mapped[str] = mapped_column(String(16))
    requests: Mapped[int] = mapped_column(default=0)
    input_tokens: Mapped[int] = mapped_column(default=0)
    output_tokens: Mapped[int] = mapped_column(default=0)
    # None when no price is known for the model.
    cost_usd: Mapped[Decimal | None] = mapped_column(Numeric(14, 6), default=None)


class ModelChoiceRow(Owned, CreatedAtMixin, Base):
    """A role's model as a user chose it (``server_default`` false), or as an admin chose it
    for every user who has made no choice (``server_default`` true; one per role)."""

    __tablename__ = "model_choices"
    __table_args__ = (UniqueConstraint("owner_id", "role", "server_default"),)

    role: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(200))
    server_default: Mapped[bool] = mapped_column(default=False, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # What the last check of this choice found (None: never checked).
    checked_at: Mapped[datetime | None] = mapped_column(default=None)
    check_ok: Mapped[bool | None] = mapped_column(default=None)
    check_detail: Mapped[str | None] = mapped_column(Text, default=None)


class ModelEndpointRow(Owned, CreatedAtMixin, Base):
    """A user's own OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM, LM Studio,
    OpenRouter ...): its name is the provider part of model strings (``mylocal:qwen2.5``)."""

    __tablename__ = "model_endpoints"
    __table_args__ = (UniqueConstraint("owner_id", "name"),)

    name: Mapped[str] = mapped_column(String(40))
    base_url: Mapped[str] = mapped_column(String(500))
    # Fernet token made with the server secret; never returned by the API.
    key_ciphertext: Mapped[str | None] = mapped_column(Text, default=None)
    # The user's overrides (None: the detected value, else the local-server default).
    structured_output: Mapped[str | None] = mapped_column(String(16), default=None)
    supports_tools: Mapped[bool | None] = mapped_column(default=None)
    compact_prompt: Mapped[bool | None] = mapped_column(default=None)
    # What the last check found, for which model, and when.
    detected_structured_output: Mapped[str | None] = mapped_column(String(16), default=None)
    detected_supports_tools: Mapped[bool | None] = mapped_column(default=None)
    checked_model: Mapped[str | None] = mapped_column(String(200), default=None)
    checked_at: Mapped[datetime | None] = mapped_column(default=None)
    check_ok: Mapped[bool | None] = mapped_column(default=None)
    check_detail: Mapped[str | None] = mapped_column(Text, default=None)
