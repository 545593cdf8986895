"""Continuity applied to one chat turn: read the message against the thread (its slots
update what the conversation is about), plan its retrieval, correct a model's queries that
lost the topic or kept a replaced value, then fold what the turn did back into the thread."""

from __future__ import annotations

import datetime as dt
import re

from pydantic import BaseModel, Field

from scholarstream.chat.continuity._classify import read_turn
from scholarstream.chat.continuity._objectives import closing_reply, note_message, note_results
from scholarstream.chat.continuity._plan import (
    SEARCH_TRIALS,
    BlueprintStep,
    asks_for_literature,
    build_blueprint,
    build_plan,
    is_link,
    is_task,
    without_links,
)
from scholarstream.chat.continuity._state import (
    Classification,
    ContinuityReport,
    QuerySent,
    RetrievalContext,
    Scope,
    SuggestedValue,
    ThreadState,
    TurnRecord,
    published,
)
from scholarstream.understanding import (
    MAX_QUERY_WORDS,
    SlotKind,
    SlotValue,
    TopicReading,
    content_words,
    is_name,
    read_message,
    same_family,
    without_dates,
)

ANSWER_CHARS = 600
_REPLACED_BY_NAME: frozenset[SlotKind] = frozenset(
    {"population", "place", "condition", "intervention"}
)
# Kinds a model's query must keep from the conversation, when the conversation has them.
_KEPT_KINDS: tuple[SlotKind, ...] = (
    "intervention",
    "condition",
    "population",
    "place",
    "organisation",
)


class RewrittenQuery(BaseModel):
    """A retrieval tool's query after continuity: the text, the publication years it is
    limited to, and each correction in plain words (empty when the query was kept)."""

    query: str
    year_from: int | None = None
    year_to: int | None = None
    corrections: list[str] = Field(default_factory=list)


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
    topic: TopicReading = Field(default_factory=TopicReading)
    replaced: list[SlotValue] = Field(default_factory=list)
    # The message refers back ("it", "their"): a model may resolve it in its own terms.
    refers_back: bool = False
    points_at_result: bool = False
    # The values this message brought into the topic.
    added: list[SlotValue] = Field(default_factory=list)
    # A closing's answer when no model writes one.
    closing_reply: str = ""
    # The message's search is not the thread's last one (its query or its years differ).
    changes_search: bool = True
    # What the message says to leave out ("instead of depression", "not fly ash").
    left_out: list[str] = Field(default_factory=list)

    @property
    def points_at_results(self) -> bool:
        """The message points at what the last search found ("tell me more about the
        second one") without changing the search."""
        return self.points_at_result and not self.changes_search and bool(self.steps)

    @property
    def expects_search(self) -> bool:
        """Whether the user expects this message to be searched: it plans retrieval,
        changes what the thread last searched, and is not a task of another kind
        ("explain the second one", "hello"). A model that answers it without searching
        gets the search run for it."""
        follows_up = self.classification.is_followup
        return (
            bool(self.steps)
            and self.changes_search
            and not is_task(self.message, follows_up=follows_up)
            and (follows_up or asks_for_literature(self.message) or self._names_a_subject())
        )

    def _names_a_subject(self) -> bool:
        """A new question names something to search for: a drug, a condition, people, a
        place or an organisation, or a phrase of its own ("perovskite solar cell
        stability"); "What were the events?" asks about what the page shows."""
        known = [v for v in self.added if v.kind not in ("topic", "aspect")]
        words = sum(len(v.text.split()) for v in self.added if v.kind == "topic")
        return bool(known) or words >= _SUBJECT_WORDS

    def rewrite(self, query: str) -> RewrittenQuery:
        """The query a retrieval tool gets for this turn, from the query a model (or a
        command) gave, which is read into the same slots and checked against them. Date
        words become the year filter. A value this message replaced (or, on a new
        question, a value of the old topic), or one the conversation let go of earlier, is
        taken out. On a follow-up, what the query lost of the conversation (its
        intervention, condition, population, place, organisation, a named subject, or what
        this message added) is put back, unless the model read a back-reference ("their
        trials") as a name of its own; on a new question, the subject and scope the user
        gave it are kept. Each change is listed."""
        # The years are the user's: dates a model writes into a query are taken out.
        years = {"year_from": self.topic.year_from, "year_to": self.topic.year_to}
        if is_link(query):  # an address is read as given
            return RewrittenQuery(query=query)
        said = read_message(query)
        corrections: list[str] = []
        text = without_dates(query) if said.dated else query
        text = _without_filter_years(text, self.topic)
        if text != query:
            text = _PUBLISHED.sub(" ", text)  # "published" was said of the dates
            limit = published(self.topic) or "none asked for"
            corrections.append(
                f"took the dates out of “{query}”: publication years are a filter ({limit})"
            )
        cued = _CUE_WORDS.sub(" ", text)
        if cued.split() != text.split() and cued.strip():
            corrections.append(f"took the conversation's cue words out of “{text}”")
            text = cued
        values = [v for v in said.values if v.kind not in ("language", "source")]
        stale = [v for v in values if _replaced_by_turn(v, self.replaced, self.topic)]
        # A value the conversation let go of earlier, named again as it was.
        stale += [
            v
            for v in values
            if v not in stale
            and not self.topic.has(v)
            and any(v.same_as(d) for d in self.topic.dropped)
        ]
        left_out = [d for d in self.left_out if _phrase(d).search(text)]
        left_out = [
            d for d in left_out if not any(_phrase(d).search(v.text) for v in self.topic.values)
        ]
        if left_out:
            text = " ".join(_without_phrases(text, left_out).split())
            names = ", ".join(f"“{d}”" for d in left_out)
            corrections.append(f"took out {names}, which you asked to leave out")
        # Run together with the value that took its place ("PM2.5 asthma children adults
        # Lagos"), a replaced person, place, disease or drug is found by its words.
        stale += [
            r
            for r in self.replaced
            if r not in stale
            and r.kind in _REPLACED_BY_NAME
            and _phrase(r.text).search(text)
            and not any(r.text.lower() in t.text.lower() for t in self.topic.values)
            and any(a.kind == r.kind and _phrase(a.text).search(text) for a in self.added)
        ]
        if stale:
            text = _without(text, stale)
            values = [v for v in read_message(text).values if v.kind not in ("language", "source")]
            names = ", ".join(f"“{v.text}”" for v in stale)
            corrections.append(f"dropped {names}, which the conversation has replaced")
        missing: list[SlotValue] = []
        resolved = self.refers_back and _resolves(values, self.message, self.topic)
        if self.retrieval.is_followup and not resolved:
            missing = _missing(values, self.topic, self.added)
        elif not resolved:
            # A new question keeps at least the subject and scope the user gave it.
            missing = [
                a
                for a in self.added
                if a.kind in (*_KEPT_KINDS, "topic") and not any(_overlaps(v, a) for v in values)
            ]
        if missing:
            # The model's own words, without "it" or "search the web", and what it lost.
            text = " ".join([*content_words(text), *(v.text for v in missing)])
            names = ", ".join(f"“{v.text}”" for v in missing)
            corrections.append(f"added the conversation's {names}")
        text = _tidy(text)
        if len(text.split()) > MAX_QUERY_WORDS:
            # A model's query is bounded as the rules' is: its least specific parts (study
            # types, then aspects, ...) go first.
            bounded = TopicReading(values=list(read_message(text).values)).query()
            if bounded:
                corrections.append(
                    f"shortened “{text}” to {MAX_QUERY_WORDS} words or fewer: a search "
                    "finds less when it asks for everything at once"
                )
                text = bounded
        return RewrittenQuery(
            query=text or self.refined_query or query, corrections=corrections, **years
        )


_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_PUBLISHED = re.compile(r"\b(?:published|publications?)\b", re.I)
# How a message follows on, copied into a query by a model: "what about X instead".
_CUE_WORDS = re.compile(
    r"^\W*(?:(?:and|ok(?:ay)?|so)\s+)?(?:what|how)\s+about\b|\b(?:instead|as well)\W*$"
    r"|\b(?:only|just|please|pls|plz)\b",
    re.I,
)


def _without_filter_years(text: str, topic: TopicReading) -> str:
    """``text`` without the bare years the date filter already holds: a model's "... 2025"
    for "only from last year"."""
    if topic.year_from is None and topic.year_to is None:
        return text
    start, end = topic.year_from or 0, topic.year_to or 9999

    def kept(match: re.Match[str]) -> str:
        return "" if start <= int(match.group(0)) <= end else match.group(0)

    return " ".join(_YEAR.sub(kept, text).split())


# Words left dangling when a value is taken out of a query ("X in and cats").
_DANGLING = re.compile(
    r"^(?:(?:in|and|or|for|of|with|on|to|vs)\s+)+|(?:\s+(?:in|and|or|for|of|with|on|to|vs))+$", re.I
)
_DOUBLED = re.compile(r"\b(in|and|or|for|of|with|on)\s+(?:(?:in|and|or|for|of|with|on)\s+)+", re.I)


_EXACT_KINDS = frozenset({"place", "phase", "organisation"})


def _chosen_instead(value: SlotValue, values: list[SlotValue], added: list[SlotValue]) -> bool:
    """Whether the query left ``value`` out for a value of its own that this message
    asked for ("and Eli Lilly's?": the query names Lilly, not Novo Nordisk): the message
    brought a value of that kind, and the query has one that is not ``value``."""
    if any(value.same_as(a) for a in added) or not any(_stands_for(a, value) for a in added):
        return False
    return any(_stands_for(v, value) and not _overlaps(v, value) for v in values)


def _stands_for(new: SlotValue, old: SlotValue) -> bool:
    """Whether a value of a query can take the place of a value of the conversation: of
    the same kind (other topic words stand for nothing in particular) and, for
    interventions, both drugs or both procedures."""
    if new.kind != old.kind or new.kind == "topic":
        return False
    return new.kind != "intervention" or same_family(new, old)


def _phrase(text: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w\-]){re.escape(text)}(?![\w\-])", re.I)


# Words around what a message leaves out that are not part of it: "the pregnancy part".
_LEFT_OUT_EDGES = re.compile(
    r"^(?:the|a|an|that|this|those|these|all)\s+|\s+(?:part|bit|stuff|angle|side|one|ones)$",
    re.I,
)


def _left_out(dropped: tuple[str, ...]) -> list[str]:
    """What a message drops, without the words around it ("the pregnancy part")."""
    phrases = [_LEFT_OUT_EDGES.sub("", d).strip() for d in dropped]
    return [p for p in phrases if p]


def _without_phrases(text: str, phrases: list[str]) -> str:
    for phrase in phrases:
        text = _phrase(phrase).sub(" ", text)
    return text


def _without(text: str, values: list[SlotValue]) -> str:
    return _without_phrases(text, [v.text for v in values])


def _tidy(text: str) -> str:
    text = " ".join(text.replace(" ,", ",").split()).strip(" ,;")
    text = _DOUBLED.sub(lambda m: m.group(0).split()[-1] + " ", text)
    return _DANGLING.sub("", text).strip(" ,;")


def _resolves(values: list[SlotValue], message: str, topic: TopicReading) -> bool:
    """Whether a query reads the message's back-reference as a name of its own: a name
    ("Wegovy SELECT trial") the message does not use and the topic does not hold."""
    said = message.lower()
    return any(
        is_name(v.text.split()[0]) and v.text.lower() not in said and not topic.has(v)
        for v in values
    )


def _replaced_by_turn(value: SlotValue, replaced: list[SlotValue], topic: TopicReading) -> bool:
    said = value.text.lower()
    if topic.has(value) or any(said in t.text.lower() for t in topic.values):
        return False  # "vitamin D" of "vitamin D deficiency" is still asked about
    if any(value.same_as(r) for r in replaced):
        return True  # "Mediterranean diet" named as it was, beside the "MIND diet"
    if any(_overlaps(value, t) for t in topic.values if t.kind == value.kind):
        return False
    return any(value.same_as(r) or _overlaps(value, r) for r in replaced)


def _overlaps(a: SlotValue, b: SlotValue) -> bool:
    """Whether two values share a content word ("dogs" and "dogs with DCM"); short
    values of the scope (a place, a phase) must be the same ("New York" is not "New
    Jersey", "phase 2" not "phase 3")."""
    if a.kind in _EXACT_KINDS or b.kind in _EXACT_KINDS:
        return a.same_as(b)
    return bool(_content(a.text) & _content(b.text))


def _content(text: str) -> set[str]:
    return {w.lower() for w in content_words(text)}


def _missing(
    values: list[SlotValue], topic: TopicReading, added: list[SlotValue]
) -> list[SlotValue]:
    """What a query lost of the conversation: values of the kinds it must keep, and the
    values this message added, in the conversation's order."""
    kept: set[SlotKind] = set(_KEPT_KINDS)
    if not topic.of("intervention") and not topic.of("condition"):
        kept.add("topic")  # the topic's own words are its subject
    wanted = [
        t
        for t in topic.values
        if t.kind in kept
        or any(t.same_as(a) for a in added)
        or (t.kind == "topic" and is_name(t.text))  # "Apple Watch", "Eli Lilly"
    ]
    said = {w for v in values for w in _content(v.text)}
    lost: list[SlotValue] = []
    for value in wanted:
        if _chosen_instead(value, values, added):
            continue
        if value.kind in _EXACT_KINDS:
            if not any(_overlaps(v, value) for v in values):
                lost.append(value)
            continue
        # A value the query lost, or kept only in part without its names ("the recall"
        # of "Philips CPAP recall"), gets back the words it lost.
        words = content_words(value.text)
        gone = [w for w in words if w.lower() not in said]
        if gone and (len(gone) == len(words) or any(w[:1].isupper() for w in gone)):
            lost.append(value.model_copy(update={"text": " ".join(gone), "heading": None}))
    return lost


def begin_turn(state: ThreadState, message: str, today: dt.date | None = None) -> TurnContinuity:
    words = without_links(message)
    classification, follow_up, said = read_turn(words, state, today)
    topic = follow_up.topic
    scope = Scope.of_topic(topic)
    retrieval = RetrievalContext(
        last_refined_query=state.refined_query,
        scope_summary=scope.summary(),
        is_followup=follow_up.is_followup,
    )
    last = state.last_turns[-1] if state.last_turns else None
    searched_trials = last is not None and any(q.tool == SEARCH_TRIALS for q in last.queries)
    plan = build_plan(message, follows_trials=follow_up.is_followup and searched_trials)
    closing = follow_up.reading == "closing"
    return TurnContinuity(
        message=message,
        classification=classification,
        refined_query="" if closing else topic.query(),
        scope=scope,
        retrieval=retrieval,
        steps=[] if closing else build_blueprint(plan, topic),
        needs_link=plan.needs_link,
        topic=topic,
        replaced=list(follow_up.replaced),
        refers_back=said.refers_back,
        points_at_result=said.points_at_result,
        added=list(follow_up.added),
        closing_reply=closing_reply(state) if closing else "",
        changes_search=_changes_search(state, topic),
        left_out=_left_out(said.dropped),
    )


# Words of no known kind that make a subject of their own.
_SUBJECT_WORDS = 2


def _changes_search(state: ThreadState, topic: TopicReading) -> bool:
    last = state.reading
    years = (topic.year_from, topic.year_to)
    return topic.query() != state.refined_query or (
        last is not None and years != (last.year_from, last.year_to)
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
        state.reading = turn.topic
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


def report(
    state: ThreadState,
    turn: TurnContinuity,
    queries: list[QuerySent],
    corrections: list[str] | None = None,
) -> ContinuityReport:
    return ContinuityReport(
        intent=turn.classification.intent,
        reason=turn.classification.reason,
        refined_query=turn.refined_query,
        queries=queries,
        objectives=state.objectives,
        published=published(turn.topic),
        corrections=corrections or [],
    )


# What only the context pack says: an answer that says it recites its instructions.
_PACK_RECITAL = re.compile(
    r"This message reads as an? [a-z ]+ \(|rewrite it into one standalone search query"
    r"|The user's open objectives|Active topic \(last refined query\)|What it is about: "
    r"|^[ \t]*[-*]?[ \t]*User: .*\n[ \t]*(?:Searched|Assistant): "
    r"|When you are stuck \(nothing found",
    re.I | re.M,
)


def recites_context_pack(answer: str) -> bool:
    """Whether a model's answer repeats the context pack it was given (the reading of the
    message, the objectives, the transcript lines) instead of answering."""
    return _PACK_RECITAL.search(answer) is not None


def context_pack(state: ThreadState, turn: TurnContinuity) -> str:
    """The thread for the model's instructions: the active topic and scope, the last turns
    with what they searched, the open objectives, and how to read this message."""
    lines = ["## Conversation so far"]
    if state.refined_query:
        lines.append(f"Active topic (last refined query): {state.refined_query}")
    if state.reading is not None and state.reading.values:
        lines.append(f"What it is about: {state.reading.summary()}")
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
        years = published(turn.topic)
        lines.append(
            "It follows on from the conversation: rewrite it into one standalone search "
            "query that keeps the topic and replaces what the message replaces (for "
            f"retrieval, read it as: '{turn.refined_query}'"
            + (f", published {years}" if years else "")
            + "). Put publication years in the year fields, not in the query. If you judge "
            "it a new topic, search with its own terms."
        )
    if turn.classification.intent == "closing":
        lines.append("The user is closing the conversation: do not search; answer briefly.")
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
