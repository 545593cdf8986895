"""Which guide a user gets: the model of the ``default`` role when one is configured,
the rule-based guide when the product runs with no model (offline mode). A model that is
configured but cannot be used (no API key...) is an error, not a silent fallback."""

from __future__ import annotations

from scholarstream.db import OwnerScope
from scholarstream.errors import OfflineModeError
from scholarstream.llm import DEFAULT_ROLE, ModelRegistry
from scholarstream.streams._model_guide import ModelGuide, UsageSink
from scholarstream.streams.core import Guide, RuleGuide


async def guide_for(
    models: ModelRegistry,
    scope: OwnerScope | None,
    *,
    role: str = DEFAULT_ROLE,
    timeout_seconds: float = 60.0,
    on_usage: UsageSink | None = None,
) -> Guide:
    try:
        resolved = await models.resolve(role, scope)
    except OfflineModeError:
        return RuleGuide()
    return ModelGuide(resolved, timeout_seconds=timeout_seconds, on_usage=on_usage)
