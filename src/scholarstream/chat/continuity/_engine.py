"""Continuity applied to one chat turn: classify the message against the thread, plan and
reframe its retrieval, then fold what the turn did back into the thread's state."""

from __future__ import annotations

from pydantic import BaseModel

from scholarstream.chat.continuity._classify import classify_message
from scholarstream.chat.continuity._objectives import note_message, note_results
from scholarstream.chat.continuity._plan import (
    BlueprintStep,
    build_blueprint,
    build_plan,
    is_link,
    without_links,
)
from scholarstream.chat.continuity._reframe import reframe_for_retrieval
from scholarstream.chat.continuity._state import (
    Classification,
    ContinuityReport,
    QuerySent,
    RetrievalContext,
    Scope,
    SuggestedValue,
    ThreadState,
    TurnRecord,
)
from scholarstream.understanding import content_words

ANSWER_CHARS = 600
# A query carries the topic when it holds at least this share of the topic's words.
CARRIES_TOPIC = 0.5


class TurnContinuity(BaseModel):
    """How one message reads against its thread, and the retrieval it plans. Computed from
    a snapshot of the thread; nothing is changed until ``finish_turn``."""

    message: str
    classification: Classification
    refined_query: str
    scope: Scope
    retrieval: RetrievalContext
    steps: list[BlueprintStep]
    needs_link: bool = False

    def rewrite(self, query: str) -> str:
        """The query a retrieval tool gets for this turn. On a follow-up, a query that
        neither carries the topic nor resolves the reference itself (it has no words of
        its own beyond the message's) gets the prior topic and scope merged in. A model
        that expanded "their trials" into its own terms is trusted: that is its judgement
        of what the reference means."""
        if (
            not self.retrieval.is_followup
            or is_link(query)  # an address is read as given
            or _carries(query, self.retrieval.last_refined_query)
        ):
            return query
        said = {w.lower() for w in content_words(self.message)}
        if any(w.lower() not in said for w in content_words(query)):
            return query
        return reframe_for_retrieval(
            query,
            self.classification.intent,
            self.retrieval.last_refined_query,
            self.retrieval.scope_summary,
            self.retrieval.is_followup,
        )


def _carries(query: str, topic: str) -> bool:
    topic_words = {w.lower() for w in content_words(topic)}
    if not topic_words:
        return True
    present = topic_words & {w.lower() for w in content_words(query)}
    return len(present) >= CARRIES_TOPIC * len(topic_words)


def begin_turn(state: ThreadState, message: str) -> TurnContinuity:
    words = without_links(message)
    classification = classify_message(words, state)
    scope = (
        state.scope.merged_with(classification.slots)
        if classification.is_followup
        else classification.slots
    )
    retrieval = RetrievalContext(
        last_refined_query=state.refined_query,
        scope_summary=scope.summary(),
        is_followup=classification.is_followup,
    )
    refined = reframe_for_retrieval(
        words,
        classification.intent,
        retrieval.last_refined_query,
        retrieval.scope_summary,
        retrieval.is_followup,
    )
    plan = build_plan(message)
    return TurnContinuity(
        message=message,
        classification=classification,
        refined_query=refined,
        scope=scope,
        retrieval=retrieval,
        steps=build_blueprint(plan, retrieval, classification),
        needs_link=plan.needs_link,
    )


def finish_turn(
    state: ThreadState, turn: TurnContinuity, queries: list[QuerySent], answer: str
) -> list[SuggestedValue]:
    """Folds the turn into ``state`` (the objective list, the topic and scope, the last
    turns); returns the chips of an ask for leverage when the turn got stuck."""
    note_message(state, turn.message, turn.classification)
    chips = note_results(state, queries, needs_link=turn.needs_link)
    if turn.refined_query.strip() and turn.steps:
        state.refined_query = turn.refined_query
        state.topic = turn.refined_query
        state.scope = turn.scope
    state.remember(
        TurnRecord(
            user=turn.message,
            assistant=answer[:ANSWER_CHARS],
            intent=turn.classification.intent,
            refined_query=turn.refined_query,
            queries=queries,
        )
    )
    return chips


def report(state: ThreadState, turn: TurnContinuity, queries: list[QuerySent]) -> ContinuityReport:
    return ContinuityReport(
        intent=turn.classification.intent,
        reason=turn.classification.reason,
        refined_query=turn.refined_query,
        queries=queries,
        objectives=state.objectives,
    )


def context_pack(state: ThreadState, turn: TurnContinuity) -> str:
    """The thread for the model's instructions: the active topic and scope, the last turns
    with what they searched, the open objectives, and how to read this message."""
    lines = ["## Conversation so far"]
    if state.refined_query:
        lines.append(f"Active topic (last refined query): {state.refined_query}")
    if not turn.scope.is_empty():
        lines.append(f"Scope: {turn.scope.summary()}")
    for record in state.last_turns:
        lines.append(f"- User: {record.user}")
        if record.queries:
            sent = "; ".join(f"{q.source or q.tool}: {q.query}" for q in record.queries)
            lines.append(f"  Searched: {sent}")
        if record.assistant:
            lines.append(f"  Assistant: {record.assistant[:300]}")
    reading = turn.classification.intent.replace("_", " ")
    lines.append(f"This message reads as a {reading} ({turn.classification.reason}).")
    if turn.retrieval.is_followup:
        lines.append(
            "It refers to the prior topic: expand 'it', 'their', 'that' into concrete terms "
            "before you search (for retrieval, read it as: "
            f"'{turn.refined_query}'). If you judge it a new topic, search with its own terms."
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
        "When you are stuck (nothing found, a source failed, a page you cannot reach), do "
        "not give up silently: ask the user for leverage (a link, a document, a name or a "
        "hint) and offer it as suggestion chips."
    )
    return "\n".join(lines)
