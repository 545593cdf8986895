"""The master objective list (seed 004): what the user is trying to achieve, kept across
turns with the evidence that moved each objective, and what the assistant asked the user
for when it got stuck."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, model_validator

from scholarstream.chat.continuity._state import (
    Classification,
    Objective,
    ObjectiveStatus,
    QuerySent,
    SuggestedValue,
    ThreadState,
)
from scholarstream.errors import InvalidInputError, NotFoundError

_LEAD_IN = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|cool|great|nice|alright)\W*\s+(?:now\s+)?)?"
    r"(?:(?:a\s+)?(?:new|different|separate|other|unrelated)"
    r"(?:\s+(?:question|topic|subject|thing))?|unrelated|switching\s+(?:topics?|gears)|"
    r"change\s+of\s+(?:topic|subject)|moving\s+on|(?:(?:let'?s|now)\s+)?switch|"
    r"something\s+(?:different|else|new)|"
    r"(?:thanks?|thank\s+you)\W+(?:one\s+)?(?:more|other|another)\s+(?:thing|question))"
    r"\s*[:\-\u2013\u2014,.]+\s*",
    re.I,
)
# Greetings and the request around what the user wants: "hi! can you find me papers on X
# please?" is objective "X".
_REQUEST = re.compile(
    r"^\W*(?:(?:hi|hello|hey)(?:\s+there)?\W+)?"
    r"(?:(?:can|could|would)\s+you\s+(?:please\s+)?|please\s+|i'?d\s+like\s+(?:you\s+)?to\s+)?"
    r"(?:(?:find|get|show|give|search|look\s+up|pull\s+up)(?:\s+(?:me|for))?\s+"
    r"(?:(?:some|any|the|recent|latest)\s+)*(?:papers|studies|articles|literature|research|"
    r"evidence|stuff)\s+(?:on|about|for|regarding)\s+|i'?m\s+looking\s+for\s+"
    r"(?:(?:papers|studies|articles|literature|research|evidence|stuff)\s+(?:on|about)\s+)?)",
    re.I,
)
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|good\s+(?:morning|afternoon|evening))(?:\s+there)?[\W_]*$", re.I
)
_POLITE_END = re.compile(r"[\s,]*\b(?:please|pls|plz|thanks?|thank\s+you)\W*$", re.I)
_DONE = re.compile(r"\b(thanks?|thank you|that'?s (it|all|what i needed)|solved|perfect)\b", re.I)
OBJECTIVE_CHARS = 200
LIBRARY = "library"
UNSEARCHED = "the sources could not be searched"


def note_message(state: ThreadState, message: str, classification: Classification) -> None:
    """A new question opens an objective; a closing thank-you achieves the current one
    when something answered it, and closes it unresolved when nothing did."""
    current = state.open_objectives()
    closing = classification.intent == "closing" or bool(_DONE.search(message))
    if closing and current:
        objective = current[-1]
        objective.status = "achieved" if _found_anything(objective) else "closed"
        objective.evidence.append(f"The user said: {message.strip()[:120]}")
    if closing and classification.intent != "new_question":
        return  # "thanks, one more thing: tau PET" closes one objective and opens another
    if _GREETING.match(message):
        return  # "hi": nothing to find yet
    if classification.intent == "new_question" or not current:
        # What the user wants found, without "new question:" or "different topic —".
        add_objective(state, objective_text(message))


def objective_text(message: str) -> str:
    """What the user wants found, in their words, without "new question:", a greeting or
    the request around it ("can you find me papers on ..., please?")."""
    text = _LEAD_IN.sub("", message.strip())
    text = _POLITE_END.sub("", _REQUEST.sub("", text)).strip()
    return text or message.strip()


# The evidence line of a turn that found something (``note_results``).
_FOUND = re.compile(r"^\d+ from ")


def _found_anything(objective: Objective) -> bool:
    """Some turn of the objective found something, even if the last one did not (a
    narrower date found nothing after broader searches found papers)."""
    return objective.status == "in_progress" or any(_FOUND.match(e) for e in objective.evidence)


def closing_reply(state: ThreadState) -> str:
    """The answer to a closing when no model writes one: short, and honest about whether
    the conversation's objective was reached."""
    current = state.open_objectives()
    if current and not _found_anything(current[-1]) and _unsearched(current[-1]):
        return (
            f"Closing “{current[-1].text}” without an answer: the sources could not be "
            "searched. Ask again when they can be reached, or come back with a link or a "
            "document."
        )
    if current and not _found_anything(current[-1]):
        return (
            f"Closing “{current[-1].text}” without an answer: I found nothing that settles "
            "it. If you come back with a link, a document or another name for it, I will "
            "try again."
        )
    # Whether what was found helped is the user's to say, not ours.
    return "You're welcome. Ask again any time; this conversation keeps its topic."


def note_results(
    state: ThreadState, queries: list[QuerySent], *, needs_link: bool = False
) -> list[SuggestedValue]:
    """Moves the current objective on what the turn's queries found. When it is stuck
    (nothing found, a source or page failed, a page asked for without its address), records
    an ask for leverage on the objective and returns its chips."""
    current = state.open_objectives()
    if not current or not queries:
        return []
    objective = current[-1]
    found = [q for q in queries if q.ok and q.results]
    if found:
        objective.status = "in_progress"
        for query in found:
            line = f"{query.results} from {query.source or query.tool} for '{query.query}'"
            if line not in objective.evidence:
                objective.evidence.append(line)
    if needs_link:
        _ask(
            objective,
            f"To read the page for '{objective.text}' I need its address: do you have the link?",
        )
        return [
            SuggestedValue(label="I have the link", value="Here is the link: "),
            SuggestedValue(label="Search instead", value=f"Search for {queries[0].query}"),
        ]
    if found:
        return []
    failed = [q for q in queries if not q.ok]
    dated = any(q.year_from is not None or q.year_to is not None for q in queries)
    objective.status = "blocked"
    link = SuggestedValue(label="I have a link", value="Here is a link that may help: ")
    # Sources that searched the words (the library searches only what is imported).
    searched = [q for q in queries if q.ok and q.source != LIBRARY]
    if failed and not searched:
        # The words are not to blame when no source could search them.
        _ask(
            objective,
            f"I'm stuck on '{objective.text}': {UNSEARCHED} for "
            f"'{queries[0].query}'. Try again later, or give "
            "me a link or a document.",
        )
        return [SuggestedValue(label="Try again", value=f"Search for {queries[0].query}"), link]
    _ask(
        objective,
        f"I'm stuck on '{objective.text}': nothing was found for '{queries[0].query}'. "
        "Do you have a link, a document, a name or another term I could use?",
    )
    chips = [
        SuggestedValue(label="Try broader terms", value=f"Search for {queries[0].query} broadly"),
        link,
        SuggestedValue(label="Try another name", value="It may also be called "),
    ]
    if dated:  # the years may be what emptied it
        chips.insert(0, SuggestedValue(label="Any year", value="Any year is fine"))
    return chips


def _unsearched(objective: Objective) -> bool:
    return bool(objective.asks) and UNSEARCHED in objective.asks[-1]


def _ask(objective: Objective, ask: str) -> None:
    """Records an ask for leverage; it takes the place of the earlier one of its kind (a
    second stuck turn asks again, it does not pile up the same question)."""
    kind = ask.split(":", 1)[0]
    objective.asks = [a for a in objective.asks if a.split(":", 1)[0] != kind] + [ask]


# --- the user's edits (the objective list is visible and editable in the chat tray) -----


class ObjectiveIn(BaseModel):
    text: str = Field(min_length=1, max_length=OBJECTIVE_CHARS)


class ObjectiveChange(BaseModel):
    text: str | None = Field(default=None, min_length=1, max_length=OBJECTIVE_CHARS)
    status: ObjectiveStatus | None = None

    @model_validator(mode="after")
    def _something(self) -> ObjectiveChange:
        if self.text is None and self.status is None:
            raise ValueError("give the new text, the new status, or both")
        return self


def add_objective(state: ThreadState, text: str) -> Objective:
    clean = _shortened(" ".join(text.split()))
    if not clean:
        raise InvalidInputError("An objective needs some text.", hint="Say what you want found.")
    objective = Objective(id=state.new_objective_id(), text=clean)
    state.objectives.append(objective)
    return objective


def _shortened(text: str) -> str:
    """At most ``OBJECTIVE_CHARS`` characters, cut at a word with "…", never inside one."""
    if len(text) <= OBJECTIVE_CHARS:
        return text
    return text[: OBJECTIVE_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _objective(state: ThreadState, objective_id: int) -> Objective:
    for objective in state.objectives:
        if objective.id == objective_id:
            return objective
    raise NotFoundError(
        f"Objective {objective_id} was not found in this conversation.",
        hint="Read the conversation's thread to see its objectives.",
    )


def change_objective(state: ThreadState, objective_id: int, change: ObjectiveChange) -> Objective:
    objective = _objective(state, objective_id)
    if change.text is not None:
        objective.text = " ".join(change.text.split())
    if change.status is not None and change.status != objective.status:
        objective.status = change.status
        objective.evidence.append(f"Marked {change.status.replace('_', ' ')} by the user")
    return objective


def remove_objective(state: ThreadState, objective_id: int) -> None:
    state.objectives.remove(_objective(state, objective_id))
