"""Users' own provider keys (encrypted) and the usage ledger of model calls."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned


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
