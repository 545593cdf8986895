"""Continuity applied to one chat turn: classify the message against the thread, plan and
reframe its retrieval, then fold what the turn did back into the thread's state."""

from __future__ import annotations

from pydantic import BaseModel, Field

from scholarstream.chat.continuity.classify import classify_message
from scholarstream.chat.continuity.objectives import note_message, note_results
from scholarstream.chat.continuity.plan import BlueprintStep, build_blueprint, build_plan
from scholarstream.chat.continuity.reframe import reframe_for_retrieval
from scholarstream.chat.continuity.state import (
    Classification,
    Intent,
    Objective,
    QuerySent,
    RetrievalContext,
    Scope,
    ThreadState,
    TurnRecord,
)
from scholarstream.chat.response import SuggestedValue

ANSWER_CHARS = 600


class ContinuityReport(BaseModel):
    """What the ``complete`` event and the stored answer carry: how the message was read,
    the refined query, every query sent (tool, source, exact text) and the objectives."""

    intent: Intent
    refined_query: str
    queries: list[QuerySent] = Field(default_factory=list)
    objectives: list[Objective] = Field(default_factory=list)


class TurnContinuity(BaseModel):
    classification: Classification
    refined_query: str
    scope: Scope
    retrieval: RetrievalContext
    steps: list[BlueprintStep]
    queries: list[QuerySent] = Field(default_factory=list)

    def rewrite(self, query: str) -> str:
        """A model's tool query on a follow-up gets the prior topic and scope merged in."""
        return reframe_for_retrieval(
            query,
            self.classification.intent,
            self.retrieval.last_refined_query,
            self.retrieval.scope_summary,
            self.retrieval.is_followup,
        )


def begin_turn(state: ThreadState, message: str) -> TurnContinuity:
    classification = classify_message(message, state)
    note_message(state, message, classification)
    scope = (
        state.scope.merged_with(classification.slots)
        if classification.is_followup
        else (classification.slots)
    )
    retrieval = RetrievalContext(
        last_refined_query=state.refined_query,
        scope_summary=scope.summary(),
        is_followup=classification.is_followup,
    )
    refined = reframe_for_retrieval(
        message,
        classification.intent,
        retrieval.last_refined_query,
        retrieval.scope_summary,
        retrieval.is_followup,
    )
    steps = build_blueprint(build_plan(message), retrieval, classification)
    return TurnContinuity(
        classification=classification,
        refined_query=refined,
        scope=scope,
        retrieval=retrieval,
        steps=steps,
    )


def finish_turn(
    state: ThreadState, turn: TurnContinuity, message: str, answer: str
) -> list[SuggestedValue]:
    """Updates the thread; returns the chips of an ask for leverage, if the turn got stuck."""
    chips = note_results(state, turn.queries)
    if turn.refined_query.strip():
        state.refined_query = turn.refined_query
        state.topic = turn.refined_query
        state.scope = turn.scope
    state.remember(
        TurnRecord(
            user=message,
            assistant=answer[:ANSWER_CHARS],
            intent=turn.classification.intent,
            refined_query=turn.refined_query,
            queries=turn.queries,
        )
    )
    return chips


def report(state: ThreadState, turn: TurnContinuity) -> ContinuityReport:
    return ContinuityReport(
        intent=turn.classification.intent,
        refined_query=turn.refined_query,
        queries=turn.queries,
        objectives=state.objectives,
    )


def context_pack(state: ThreadState, turn: TurnContinuity) -> str:
    """The thread for the model's instructions: the active topic and scope, the last turns,
    the open objectives, and how to read a follow-up."""
    lines = ["## Conversation so far"]
    if state.refined_query:
        lines.append(f"Active topic (last refined query): {state.refined_query}")
    if not turn.scope.is_empty():
        lines.append(f"Scope: {turn.scope.summary()}")
    for record in state.last_turns:
        lines.append(f"- User: {record.user}")
        if record.queries:
            sent = "; ".join(f"{q.tool}: {q.query}" for q in record.queries)
            lines.append(f"  Searched: {sent}")
        if record.assistant:
            lines.append(f"  Assistant: {record.assistant[:300]}")
    lines.append(
        f"This message reads as {turn.classification.intent.replace('_', ' ')}. "
        "For follow-ups that refer to the prior topic ('it', 'their', 'that'), expand them "
        "into concrete terms from the last turn before searching: 'can you search for it' "
        f"means 'search for {state.refined_query or 'the prior topic'}'."
    )
    open_objectives = state.open_objectives()
    if open_objectives:
        lines.append(
            "## The user's open objectives (work toward all of them, not only the "
            "last message; say which one your answer moves)"
        )
        for objective in open_objectives:
            lines.append(f"- [{objective.status}] {objective.text}")
        lines.append(
            "When you are stuck (nothing found, a source failed, a page you cannot reach), "
            "ask the user for leverage: a link, a document, a name or a hint."
        )
    return "\n".join(lines)
