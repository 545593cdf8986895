"""What a guide is: given one turn's request, it streams its message and ends with its
answer. ``ModelGuide`` asks a model; ``RuleGuide`` works without one. Both answers are
validated the same way afterwards, so neither can move the workflow where the seed's
transition rules do not allow."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol

from scholarstream.search.core import ModelFallback
from scholarstream.streams.core._actions import UserAction
from scholarstream.streams.core._answer import GuideAnswer
from scholarstream.streams.core._config import PartialStreamConfig
from scholarstream.streams.core._events import GuideRetry, GuideTextDelta
from scholarstream.streams.core._session import GuideMessage
from scholarstream.streams.core._workflow import WorkflowStep


@dataclass(frozen=True)
class GuideFellBack:
    """Said by a guide that answered this turn without its model's answer (it was
    unusable, late or failed): the turn's result and stored message carry the record."""

    fallback: ModelFallback


GuideStreamItem = GuideTextDelta | GuideRetry | GuideAnswer | GuideFellBack


@dataclass(frozen=True)
class GuideRequest:
    """One turn, after the user's edits and action were applied (seed section 4, steps 1-3)."""

    current_step: WorkflowStep
    message: str
    action: UserAction
    action_note: str
    config: PartialStreamConfig
    skipped_steps: tuple[WorkflowStep, ...]
    history: Sequence[GuideMessage]
    """The conversation before this turn."""
    valid_next_steps: tuple[WorkflowStep, ...]
    step_just_completed: bool
    system_prompt: str
    user_prompt: str
    unavailable_sources: frozenset[str] = frozenset()
    """Sources that cannot run here: a stream created by this turn does not enable them."""
    edited_fields: frozenset[str] = frozenset()
    """The fields the user edited inline in this turn: theirs, whatever the guide extracts
    (``validate_answer`` keeps the edited values)."""


class Guide(Protocol):
    def respond(self, request: GuideRequest) -> AsyncGenerator[GuideStreamItem, None]:
        """Text deltas (and retries) while the message is written, then one ``GuideAnswer``
        (a ``GuideFellBack`` before it when the offline guide answered instead). Raises a
        ``ScholarStreamError`` (an ``LLMError`` for a model) when it cannot answer."""
        ...
