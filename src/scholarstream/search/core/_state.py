"""What a search run accumulates across its iterations."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from scholarstream.search.core._fallbacks import ModelFallback
from scholarstream.search.core._models import (
    LabelledPaper,
    PaperCollection,
    ScoredPaper,
    SearchStrategy,
    StrategyChange,
    UserFeedback,
)


class IterationRecord(BaseModel):
    iteration: int
    strategy: SearchStrategy
    result_count: int
    outcome: Literal["strategy_rejected", "iterated", "approved"]
    feedback: UserFeedback | None = None
    changes: list[StrategyChange] = Field(
        default_factory=list, description="What the strategy changed in answer to feedback."
    )
    not_made: list[StrategyChange] = Field(
        default_factory=list, description="Changes proposed and undone, with the reason."
    )


class WorkflowState(BaseModel):
    current_iteration: int = 0
    iterations: list[IterationRecord] = Field(default_factory=list)
    previous_strategies: list[SearchStrategy] = Field(default_factory=list)
    rejected_strategies: list[SearchStrategy] = Field(default_factory=list)
    latest_feedback: UserFeedback | None = None
    accumulated_papers: list[ScoredPaper] = Field(
        default_factory=list, description="Papers the user marked relevant, in any iteration."
    )
    labelled: list[LabelledPaper] = Field(
        default_factory=list, description="Every judgement the user gave, latest wins."
    )
    last_collection: PaperCollection | None = None
    is_complete: bool = False
    fallbacks: list[ModelFallback] = Field(
        default_factory=list,
        description="The AI steps that did without the model's answer, one per step.",
    )

    def record_iteration(
        self,
        strategy: SearchStrategy,
        result_count: int,
        feedback: UserFeedback | None = None,
        *,
        outcome: Literal["strategy_rejected", "iterated", "approved"] = "iterated",
        changes: list[StrategyChange] | None = None,
        not_made: list[StrategyChange] | None = None,
    ) -> None:
        self.iterations.append(
            IterationRecord(
                iteration=self.current_iteration,
                strategy=strategy,
                result_count=result_count,
                outcome=outcome,
                feedback=feedback,
                changes=changes or [],
                not_made=not_made or [],
            )
        )
        self.previous_strategies.append(strategy)
        if outcome == "strategy_rejected":
            self.rejected_strategies.append(strategy)
        if feedback is not None:
            self.latest_feedback = _carry_terms(self.latest_feedback, feedback)
        self.current_iteration += 1

    def add_accumulated(self, papers: list[ScoredPaper]) -> None:
        """Add papers to the accumulated list, once each (by id)."""
        existing = {p.id for p in self.accumulated_papers}
        for paper in papers:
            if paper.id not in existing:
                self.accumulated_papers.append(paper)
                existing.add(paper.id)

    def add_labels(self, collection: PaperCollection, feedback: UserFeedback) -> None:
        """Remember the user's judgements of papers in ``collection``; a later judgement of
        the same paper replaces the earlier one."""
        judged = {pid: True for pid in feedback.marked_relevant}
        judged |= {pid: False for pid in feedback.marked_irrelevant}
        if not judged:
            return
        kept = [label for label in self.labelled if label.id not in judged]
        for paper in [*collection.papers, *self.accumulated_papers]:
            if paper.id in judged:
                kept.append(
                    LabelledPaper(id=paper.id, record=paper.record, relevant=judged[paper.id])
                )
                del judged[paper.id]
        self.labelled = kept


def _carry_terms(earlier: UserFeedback | None, latest: UserFeedback) -> UserFeedback:
    """Terms the user added or excluded hold for the rest of the run, not one iteration;
    an excluded term added again (or the reverse) follows the latest word."""
    if earlier is None:
        return latest
    add = [t for t in earlier.add_terms if t not in latest.exclude_terms] + latest.add_terms
    exclude = [t for t in earlier.exclude_terms if t not in latest.add_terms]
    return latest.model_copy(
        update={
            "add_terms": list(dict.fromkeys(add)),
            "exclude_terms": list(dict.fromkeys(exclude + latest.exclude_terms)),
        }
    )
