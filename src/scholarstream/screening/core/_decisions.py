"""Decisions from the history: each reviewer's current decision on each record (their
latest that is not undone), what undo takes back, the project's outcome per record
(agreement, conflict, resolution) and the conflicts a resolver settles."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.screening.core._models import DecisionEvent, Stage

OutcomeKind = Literal["include", "exclude", "maybe", "conflict", "awaiting", "unscreened"]
"""A record's title-and-abstract outcome for the project: a decision every reviewer
agrees on (or a resolver's), reviewers who disagree (``conflict``), a record some but not
all reviewers decided (``awaiting``), or one nobody decided yet."""


def current(
    events: Iterable[DecisionEvent], stage: Stage, reviewer: uuid.UUID | None = None
) -> dict[uuid.UUID, DecisionEvent]:
    """Record id -> the latest decision not undone at ``stage`` (of ``reviewer``, or of
    anyone: then the latest taken)."""
    latest: dict[uuid.UUID, DecisionEvent] = {}
    for event in events:
        if event.undone or event.stage != stage:
            continue
        if reviewer is not None and event.reviewer_id != reviewer:
            continue
        held = latest.get(event.record_id)
        if held is None or (event.decided_at, event.seq) >= (held.decided_at, held.seq):
            latest[event.record_id] = event
    return latest


def by_reviewer(
    events: Iterable[DecisionEvent], stage: Stage
) -> dict[uuid.UUID, dict[uuid.UUID, DecisionEvent]]:
    """Reviewer id -> record id -> that reviewer's current decision at ``stage``."""
    grouped: dict[uuid.UUID, list[DecisionEvent]] = {}
    for event in events:
        grouped.setdefault(event.reviewer_id, []).append(event)
    return {who: current(mine, stage) for who, mine in grouped.items()}


def reasons_in_use(events: Iterable[DecisionEvent]) -> dict[str, int]:
    """Each exclusion reason of the current title-and-abstract decisions (every
    reviewer's), with how many exclusions give it."""
    used: dict[str, int] = {}
    for decisions in by_reviewer(events, "screen").values():
        for event in decisions.values():
            if event.decision == "exclude" and event.reason:
                used[event.reason] = used.get(event.reason, 0) + 1
    return used


def undo_target(
    events: Iterable[DecisionEvent], reviewer: uuid.UUID, stage: Stage = "screen"
) -> DecisionEvent | None:
    """The reviewer's last decision at ``stage`` that is not undone yet."""
    mine = [e for e in events if e.reviewer_id == reviewer and e.stage == stage and not e.undone]
    return max(mine, key=lambda e: e.seq, default=None)


def screened_order(events: Iterable[DecisionEvent], reviewer: uuid.UUID) -> list[DecisionEvent]:
    """The reviewer's current title-and-abstract decisions in the order taken."""
    return sorted(current(events, "screen", reviewer).values(), key=lambda e: e.seq)


class ReviewerDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reviewer_id: uuid.UUID
    decision: str
    reason: str | None = None


class RecordOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    record_id: uuid.UUID
    outcome: OutcomeKind
    reason: str | None = Field(default=None, description="The exclusion reason of the outcome.")
    decisions: list[ReviewerDecision] = Field(default_factory=list)
    resolved: bool = False


@dataclass(frozen=True)
class Outcomes:
    """Every record's outcome, in the records' order."""

    items: list[RecordOutcome]

    def count(self, kind: OutcomeKind) -> int:
        return sum(1 for item in self.items if item.outcome == kind)

    def of(self, kind: OutcomeKind) -> list[RecordOutcome]:
        return [item for item in self.items if item.outcome == kind]

    @property
    def screened(self) -> int:
        """Records at least one reviewer decided."""
        return sum(1 for item in self.items if item.outcome != "unscreened")


def outcomes(
    record_ids: Sequence[uuid.UUID],
    reviewers: Sequence[uuid.UUID],
    events: Sequence[DecisionEvent],
) -> Outcomes:
    """The project's outcome of each record: a resolution wins; otherwise the reviewers'
    decisions, when every reviewer decided and all agree."""
    screens = by_reviewer(events, "screen")
    resolutions = current(events, "resolve")
    items: list[RecordOutcome] = []
    for record_id in record_ids:
        decided = [
            ReviewerDecision(reviewer_id=who, decision=event.decision, reason=event.reason)
            for who in reviewers
            if (event := screens.get(who, {}).get(record_id)) is not None
        ]
        resolution = resolutions.get(record_id)
        if resolution is not None:
            items.append(
                RecordOutcome(
                    record_id=record_id,
                    outcome="include" if resolution.decision == "include" else "exclude",
                    reason=resolution.reason,
                    decisions=decided,
                    resolved=True,
                )
            )
            continue
        labels = {d.decision for d in decided}
        outcome: OutcomeKind
        reason: str | None = None
        if not decided:
            outcome = "unscreened"
        elif len(labels) > 1:
            outcome = "conflict"
        elif len(decided) < len(reviewers):
            outcome = "awaiting"
        else:
            (label,) = labels
            outcome = (
                "include" if label == "include" else "exclude" if label == "exclude" else "maybe"
            )
            if outcome == "exclude":
                reasons = [d.reason for d in decided if d.reason]
                reason = reasons[0] if reasons else None
        items.append(
            RecordOutcome(record_id=record_id, outcome=outcome, reason=reason, decisions=decided)
        )
    return Outcomes(items)
