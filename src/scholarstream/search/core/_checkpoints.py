"""Human checkpoints of the search workflow (seed 003): where it stops, what it shows,
and what the user can answer.

Checkpoint 1 (``STRATEGY_CONFIRMATION``, optional) shows the intent and the strategy before
any source is queried; checkpoint 2 (``RESULT_REVIEW``, always) shows the organised results.
A ``Decision`` answers either: approve, edit (with ``revised_data``: a ``SearchStrategy`` at
checkpoint 1, a ``UserFeedback`` at checkpoint 2), or reject (with a ``note``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.search.core._models import (
    PaperCollection,
    ParsedIntent,
    ScoredPaper,
    SearchStrategy,
    StrategyChange,
    UserFeedback,
)
from scholarstream.sources import source_names
from scholarstream.validation_messages import explain

LIBRARY_SOURCE = "library"
"""The user's own library, searchable like a source (``search.assembly.LIBRARY``)."""


class CheckpointKind(StrEnum):
    STRATEGY_CONFIRMATION = "strategy_confirmation"
    RESULT_REVIEW = "result_review"


class DecisionAction(StrEnum):
    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"


class StrategyPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    intent: ParsedIntent
    strategy: SearchStrategy
    iteration: int
    changes: list[StrategyChange] = Field(
        default_factory=list,
        description="What this strategy changed in answer to the feedback, each with the "
        "user's words it answers.",
    )
    not_made: list[StrategyChange] = Field(
        default_factory=list,
        description="Changes the builder proposed and the review undid, each with its reason: "
        "no words of the feedback ask for it, or it would leave out a paper marked relevant.",
    )


class ResultPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: PaperCollection
    accumulated_papers: list[ScoredPaper]
    iteration: int


class Checkpoint(BaseModel):
    kind: CheckpointKind
    payload: StrategyPayload | ResultPayload
    run_id: str = Field(description="UUID of the workflow run.")
    iteration: int
    timestamp: str = Field(description="ISO 8601, UTC.")


class Decision(BaseModel):
    action: DecisionAction
    revised_data: Any = Field(
        default=None,
        description="A SearchStrategy (checkpoint 1) or a UserFeedback (checkpoint 2), as JSON.",
    )
    note: str | None = None


class CheckpointHandler(Protocol):
    async def handle(self, checkpoint: Checkpoint) -> Decision: ...


def _problems(exc: ValidationError) -> str:
    return explain(exc, whole="the strategy")


def searchable_sources() -> list[str]:
    """Every source a strategy may name: the registered literature sources and the
    user's library (the same list a run may be started with)."""
    return sorted({*source_names(), LIBRARY_SOURCE})


def revised_strategy(decision: Decision) -> SearchStrategy:
    """The strategy of an EDIT at checkpoint 1; ``InvalidInputError`` if it is not one,
    or if it names a source that does not exist."""
    try:
        strategy = SearchStrategy.model_validate(decision.revised_data)
    except ValidationError as exc:
        raise InvalidInputError(
            f"The edited strategy is not valid: {_problems(exc)}.",
            hint='Send revised_data as a search strategy: {"queries": [{"source": '
            '"pubmed", "query": "..."}], "date_from": null, "date_to": null}.',
        ) from exc
    known = searchable_sources()
    unknown = [source for source in strategy.sources if source not in known]
    if unknown:
        named = "an unknown source" if len(unknown) == 1 else "unknown sources"
        raise InvalidInputError(
            f"The edited strategy names {named}: {', '.join(map(repr, unknown))}.",
            hint=f"Sources: {', '.join(known)}.",
        )
    return strategy


def revised_feedback(decision: Decision) -> UserFeedback:
    """The feedback of an EDIT at checkpoint 2; ``InvalidInputError`` if it is not one."""
    try:
        return UserFeedback.model_validate(decision.revised_data or {})
    except ValidationError as exc:
        raise InvalidInputError(
            f"The feedback is not valid: {_problems(exc)}.",
            hint='Send revised_data as {"marked_relevant": [ids], "marked_irrelevant": '
            '[ids], "free_text_feedback": "..."} with ids from the result list.',
        ) from exc


def validate_decision(checkpoint: Checkpoint, decision: Decision) -> None:
    """Refuses, before the workflow sees it, a decision the workflow could not use."""
    if decision.action is not DecisionAction.EDIT:
        return
    if checkpoint.kind is CheckpointKind.STRATEGY_CONFIRMATION:
        revised_strategy(decision)
        return
    feedback = revised_feedback(decision)
    assert isinstance(checkpoint.payload, ResultPayload)
    known = {p.id for p in checkpoint.payload.collection.papers}
    known |= {p.id for p in checkpoint.payload.accumulated_papers}
    unknown = sorted(set(feedback.marked_relevant + feedback.marked_irrelevant) - known)
    if unknown:
        raise InvalidInputError(
            f"These papers are not in the results under review: {', '.join(unknown[:5])}.",
            hint="Mark papers by the ids shown in this checkpoint's result list.",
        )
