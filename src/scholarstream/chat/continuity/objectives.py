"""The master objective list (seed 004): what the user is trying to achieve, kept across
turns with the evidence that moved each objective, and what the assistant asked the user
for when it got stuck."""

from __future__ import annotations

import re

from scholarstream.chat.continuity.state import (
    Classification,
    Objective,
    QuerySent,
    ThreadState,
)
from scholarstream.chat.response import SuggestedValue

_DONE = re.compile(r"\b(thanks?|thank you|that'?s (it|all|what i needed)|solved|perfect)\b", re.I)
OBJECTIVE_CHARS = 200


def note_message(state: ThreadState, message: str, classification: Classification) -> None:
    """A new question opens an objective; a closing thank-you achieves the current one."""
    current = state.open_objectives()
    if _DONE.search(message) and current:
        current[-1].status = "achieved"
        current[-1].evidence.append(f"The user said: {message.strip()[:120]}")
        return
    if classification.intent == "new_question" or not current:
        text = " ".join(message.split())[:OBJECTIVE_CHARS]
        state.objectives.append(Objective(id=len(state.objectives) + 1, text=text))


def note_results(state: ThreadState, queries: list[QuerySent]) -> list[SuggestedValue]:
    """Moves the current objective on what the turn's queries found; when nothing was
    found or a source failed, records an ask for leverage and returns its chips."""
    current = state.open_objectives()
    if not current or not queries:
        return []
    objective = current[-1]
    found = [q for q in queries if q.ok and q.results]
    if found:
        objective.status = "in_progress"
        objective.evidence.extend(
            f"{q.results} from {q.source or q.tool} for '{q.query}'" for q in found
        )
        return []
    failed = [q for q in queries if not q.ok]
    reason = "a source failed" if failed else "nothing was found"
    objective.status = "blocked"
    ask = (
        f"I'm stuck on '{objective.text}': {reason} for '{queries[0].query}'. "
        "Do you have a link, a document, a name or another term I could use?"
    )
    objective.asks.append(ask)
    return [
        SuggestedValue(label="Try broader terms", value=f"Search for {queries[0].query} broadly"),
        SuggestedValue(label="I have a link", value="Here is a link that may help: "),
        SuggestedValue(label="Try another name", value="It may also be called "),
    ]
