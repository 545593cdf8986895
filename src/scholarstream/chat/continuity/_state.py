"""The thread state of seed 004, persisted per conversation: the merged state (active
topic, refined query, scope), the last turns with the queries they sent, and the master
objective list."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from scholarstream.understanding import SlotKind, TopicReading

Intent = Literal["new_question", "slot_fill", "followup_continuation", "closing"]
# "closed": the user ended it before anything answered it (a thank-you after nothing was
# found is no success).
ObjectiveStatus = Literal["open", "in_progress", "achieved", "blocked", "closed"]
LAST_TURNS = 3


class SuggestedValue(BaseModel):
    """A chip under the answer; clicking it sends ``value`` as the user's next message."""

    label: str = Field(min_length=1, max_length=120)
    value: str = Field(min_length=1, max_length=2000)


class Scope(BaseModel):
    """What retrieval is restricted to. A slot fill replaces the slots it names and keeps
    the others."""

    jurisdictions: list[str] = Field(default_factory=list)
    date_range: str | None = None
    phases: list[str] = Field(default_factory=list)
    populations: list[str] = Field(default_factory=list)
    organisations: list[str] = Field(default_factory=list)

    @classmethod
    def of_topic(cls, topic: TopicReading) -> Scope:
        """The scope slots of what the conversation is about."""

        def texts(kind: SlotKind) -> list[str]:
            return [v.text for v in topic.of(kind)]

        return cls(
            jurisdictions=texts("place"),
            date_range=published(topic) or None,
            phases=texts("phase"),
            populations=texts("population"),
            organisations=texts("organisation"),
        )

    def is_empty(self) -> bool:
        return not (
            self.jurisdictions
            or self.date_range
            or self.phases
            or self.populations
            or self.organisations
        )

    def merged_with(self, newer: Scope) -> Scope:
        return Scope(
            jurisdictions=newer.jurisdictions or self.jurisdictions,
            date_range=newer.date_range or self.date_range,
            phases=newer.phases or self.phases,
            populations=newer.populations or self.populations,
            organisations=newer.organisations or self.organisations,
        )

    def terms(self) -> list[str]:
        """The slot values as query terms, in a fixed order."""
        return [
            *self.organisations,
            *self.jurisdictions,
            *self.phases,
            *self.populations,
            *([self.date_range] if self.date_range else []),
        ]

    def summary(self) -> str:
        return ", ".join(self.terms())


def published(topic: TopicReading) -> str:
    """The topic's years in words: "since 2015", "before 2015", "2010 to 2015", ""."""
    start, end = topic.year_from, topic.year_to
    if start is not None and end is not None:
        return str(start) if start == end else f"{start} to {end}"
    if start is not None:
        return f"since {start}"
    if end is not None:
        return f"before {end + 1}"
    return ""


class QuerySent(BaseModel):
    """One query a turn sent to a tool or a source, exactly as sent."""

    tool: str
    query: str
    source: str | None = None
    results: int | None = None
    ok: bool = True
    # The publication years the query was limited to, when it was.
    year_from: int | None = None
    year_to: int | None = None


class TurnRecord(BaseModel):
    user: str
    assistant: str = ""
    intent: Intent = "new_question"
    refined_query: str = ""
    queries: list[QuerySent] = Field(default_factory=list)


class Objective(BaseModel):
    id: int
    text: str
    status: ObjectiveStatus = "open"
    evidence: list[str] = Field(default_factory=list)
    asks: list[str] = Field(default_factory=list)


class ThreadState(BaseModel):
    topic: str = ""
    refined_query: str = ""
    scope: Scope = Field(default_factory=Scope)
    # What the conversation is about, slot by slot; the refined query is rendered from it.
    reading: TopicReading | None = None
    last_turns: list[TurnRecord] = Field(default_factory=list)
    objectives: list[Objective] = Field(default_factory=list)
    # The id the next objective gets. Ids are never reused within a conversation (a deleted
    # objective's id stays retired), so this is kept rather than taken from the list.
    next_objective_id: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _next_id_after_every_objective(self) -> ThreadState:
        # A thread stored before the counter was kept continues after its highest id.
        highest = max((o.id for o in self.objectives), default=0)
        self.next_objective_id = max(self.next_objective_id, highest + 1)
        return self

    def new_objective_id(self) -> int:
        objective_id = self.next_objective_id
        self.next_objective_id += 1
        return objective_id

    def remember(self, turn: TurnRecord) -> None:
        self.last_turns = [*self.last_turns, turn][-LAST_TURNS:]

    def open_objectives(self) -> list[Objective]:
        return [o for o in self.objectives if o.status in ("open", "in_progress", "blocked")]


class Classification(BaseModel):
    intent: Intent
    reason: str
    slots: Scope = Field(default_factory=Scope)

    @property
    def is_followup(self) -> bool:
        return self.intent in ("slot_fill", "followup_continuation")


class RetrievalContext(BaseModel):
    """What the blueprint gives ``reframe_for_retrieval`` for every subquestion."""

    last_refined_query: str = ""
    scope_summary: str = ""
    is_followup: bool = False


class ContinuityReport(BaseModel):
    """What the ``complete`` event and the stored answer carry: how the message was read,
    the refined query, every query sent (tool, source, exact text) and the objectives."""

    intent: Intent
    reason: str = ""
    refined_query: str
    queries: list[QuerySent] = Field(default_factory=list)
    objectives: list[Objective] = Field(default_factory=list)
    # The publication years every search of the turn was limited to ("2015-", "" for none).
    published: str = ""
    # How a model's query was corrected to keep the conversation's topic, in plain words.
    corrections: list[str] = Field(default_factory=list)
