"""The fallback decision of an LLM skill: which failures it falls back on, why (read from
the failure), and the one record per skill per run (``FallbackLog``).

A skill calls the model, and on a failure in ``FALLBACK_ERRORS`` uses its offline
counterpart for that call only and tells the log; the log keeps the first record of each
skill, logs it once at WARNING (the LLM layer has logged the model failure itself), and
hands the records to the run that shows and stores them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pydantic import ValidationError
from pydantic_ai.exceptions import (
    ModelRequestTimeout,
    ModelTimeoutError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)

from scholarstream.errors import (
    LLMError,
    MissingCredentialsError,
    OfflineModeError,
    ScholarStreamError,
)
from scholarstream.search.core import FallbackReason, ModelFallback, merge_fallbacks, model_fallback

__all__ = ["FALLBACK_ERRORS", "FallbackLog", "fallback_reason"]

log = logging.getLogger(__name__)

FALLBACK_ERRORS: tuple[type[BaseException], ...] = (LLMError, TimeoutError)
"""What a skill falls back on: every model failure (``LLMError``, whatever its kind) and a
deadline that ran out around the call. Anything else is a bug and propagates."""

# The failure's causes, most telling first: a configuration problem, then time, then form.
_CAUSES: tuple[tuple[tuple[type[BaseException], ...], FallbackReason], ...] = (
    ((OfflineModeError, MissingCredentialsError), "not_configured"),
    ((TimeoutError, ModelRequestTimeout, ModelTimeoutError), "late"),
    ((UnexpectedModelBehavior, UsageLimitExceeded, ValidationError), "unusable"),
)


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def fallback_reason(exc: BaseException) -> FallbackReason:
    """Why a model call gave nothing usable, read from the failure and its causes."""
    chain = list(_chain(exc))
    for kinds, reason in _CAUSES:
        if any(isinstance(link, kinds) for link in chain):
            return reason
    return "failed"


class FallbackLog:
    """The fallbacks of one run: the first of each skill, in the order they happened."""

    def __init__(self) -> None:
        self._items: list[ModelFallback] = []

    @property
    def items(self) -> list[ModelFallback]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def failed(self, skill: str, exc: BaseException) -> ModelFallback:
        """``skill`` fell back because its model call raised ``exc``."""
        hint = exc.hint if isinstance(exc, ScholarStreamError) else None
        return self._add(model_fallback(skill, fallback_reason(exc), hint), detail=str(exc))

    def unusable(self, skill: str, detail: str) -> ModelFallback:
        """``skill`` fell back because the model's answer, valid in form, could not be used
        (``detail`` is for the log only)."""
        hint = "Try again, or choose a stronger model for this role."
        return self._add(model_fallback(skill, "unusable", hint), detail=detail)

    def merge(self, items: Iterable[ModelFallback]) -> None:
        """Records made elsewhere (a durable step replayed after a restart)."""
        self._items = merge_fallbacks(self._items, list(items))

    def _add(self, fallback: ModelFallback, *, detail: str) -> ModelFallback:
        known = next((f for f in self._items if f.skill == fallback.skill), None)
        if known is not None:
            return known
        self._items.append(fallback)
        log.warning(
            "%s fell back to its offline counterpart (%s): %s",
            fallback.skill,
            fallback.reason,
            detail,
        )
        return fallback
