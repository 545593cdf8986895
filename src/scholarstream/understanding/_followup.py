"""How a message updates what a conversation is about.

A follow-up updates slots instead of appending words: a new value of a kind replaces the
old values of that kind ("what about in cats?" after dogs); "also", "too", "as well" add;
"how does X compare?" makes X the intervention and the old one its comparator; an aspect
question replaces the previous aspect; a condition named as an outcome ("any data on
cytokine release syndrome rates?") is an aspect of the topic, not a new topic. A date
phrase sets the year range. A closing changes nothing and searches nothing. A message
that names a whole subject of its own, with no cue that it follows on, starts a new topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from scholarstream.understanding import _lexicon as lex
from scholarstream.understanding._follow_up_kinds import (
    as_follow_up_kind,
    is_dropped_by,
    offered_subject,
    shares_a_word,
    stem_word,
    stems,
)
from scholarstream.understanding._mesh_kinds import mesh_kind
from scholarstream.understanding._phrase_kinds import is_condition_word, is_name
from scholarstream.understanding._siblings import place_siblings
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._topic import (
    SUBJECT_KINDS,
    MessageReading,
    SlotValue,
    TopicReading,
    bounded_values,
    dropped_values,
    same_family,
)

TurnReading = Literal["new_question", "slot_fill", "followup_continuation", "closing"]
# Without a follow-up cue, a statement of this many words naming a subject of its own is
# a new question; a shorter one ("rare diseases specifically") narrows the topic.
NEW_QUESTION_WORDS = 9
# A question of at least this many words sharing only scope values with the topic starts
# a topic of its own.
MIN_FULL_QUESTION_WORDS = 5
# The reason given for a message that only lifts the date limit ("any year is fine").
LIFTS_DATES = "lifts the date limit"
# Leads that give a treatment beside the one in play: "with protein supplementation".
_ALONGSIDE = frozenset({"with", "plus", "alongside"})
_SCOPE_KINDS: tuple[SlotKind, ...] = (
    "population",
    "place",
    "organisation",
    "phase",
    "study_type",
    "language",
    "source",
)


@dataclass(frozen=True)
class FollowUp:
    """What the conversation is about after a message, and how the message was read."""

    reading: TurnReading
    reason: str
    topic: TopicReading
    replaced: tuple[SlotValue, ...] = ()
    added: tuple[SlotValue, ...] = ()

    @property
    def is_followup(self) -> bool:
        return self.reading in ("slot_fill", "followup_continuation")


def follow(thread: TopicReading | None, message: MessageReading) -> FollowUp:
    """The conversation's topic after ``message``, given the topic before it."""
    if message.closing:
        return FollowUp("closing", "closes the conversation", thread or TopicReading())
    if thread is None or not thread.values:
        return _new(message, "no earlier topic")
    message = _names_as_organisations(thread, message)
    if message.switches:
        return _new(message, "changes the subject", thread)
    if _starts_new_topic(thread, message):
        return _new(message, "names a subject of its own", thread)
    if _leaves_the_subject(thread, message):
        return _new(message, "leaves the subject for one of its own", thread)
    return _update(thread, message)


def _leaves_the_subject(thread: TopicReading, message: MessageReading) -> bool:
    """ "forget phones, what about four-day school weeks": the main subject is left
    behind for one the message names, with all that was said about it."""
    subject = thread.subject()
    named = [v for v in message.values if v.kind in SUBJECT_KINDS]
    return (
        message.forgets
        and bool(subject)
        and is_dropped_by(subject[0], message)
        and bool(named)
        # "forget naloxone, just the test strips": a part of the topic, kept in its terms
        and not message.narrows
    )


def _names_as_organisations(thread: TopicReading, message: MessageReading) -> MessageReading:
    """In a conversation about organisations, a name no list or MeSH knows is one too
    ("What licensing deals has Moderna signed?" after Pfizer)."""
    if not thread.of("organisation"):
        return message
    values = tuple(
        v.model_copy(update={"kind": "organisation"})
        if v.kind == "topic" and is_name(v.text) and not lead
        else v
        for v, lead in zip(message.values, message.leads, strict=True)
    )
    return replace(message, values=values)


def _new(message: MessageReading, reason: str, thread: TopicReading | None = None) -> FollowUp:
    topic = message.as_topic()
    if thread is not None:
        topic.dropped = dropped_values([*thread.dropped, *thread.values], topic)
    replaced = tuple(v for v in (thread.values if thread else []) if not topic.has(v))
    return FollowUp("new_question", reason, topic, replaced=replaced, added=tuple(topic.values))


def _starts_new_topic(thread: TopicReading, message: MessageReading) -> bool:
    """Whether a message leaves the conversation's topic for one of its own.

    It never does when it cues a follow-up ("it", "also", a comparison) or shares a word
    with the topic. It does when it names a new intervention and a new condition together
    (even in "what about X for Y?"). Otherwise an elliptical message ("what about X?",
    "and X?", "X specifically") follows on, and a message naming a subject in full
    ("What is GSK's vaccine pipeline?", "Donanemab amyloid clearance and ARIA risk")
    starts a new topic, unless it only asks about the topic's outcome ("how common was
    interstitial lung disease?" after a drug), its treatment ("does vaccination lower the
    risk?" after a disease) or, briefly, an aspect in words of its own, under the same
    organisation."""
    own = message.subject()
    named = [*own, *message.of("organisation")]
    if not named or message.refers_back or message.adds or message.compares:
        return False
    shared = [v for v in message.values if any(shares_a_word(v, t) for t in thread.values)]
    # A question asked in full that shares only who or where with the topic ("...in
    # children?") is a question of its own; one that shares its subject follows on.
    asked_in_full = message.asks and message.word_count >= MIN_FULL_QUESTION_WORDS
    if any(v.kind in SUBJECT_KINDS or not asked_in_full for v in shared):
        return False
    kinds = {v.kind for v in own}
    if {"intervention", "condition"} <= kinds:
        return True
    if message.elliptical or message.narrows or _completes(thread, message):
        return False
    if message.word_count >= NEW_QUESTION_WORDS:
        return True
    if message.of("organisation"):
        # Another organisation with a subject of its own is a question of its own; an
        # organisation alone ("what did the EMA decide?"), or a regulator with what it
        # decided ("EPA's new maximum contaminant levels"), asks about the topic in play.
        if all(v.text.lower() in lex.REGULATOR_NAMES for v in message.of("organisation")):
            return bool(kinds & {"intervention", "condition"})
        return bool(own)
    # A question asked in full about a subject of its own starts a topic; a short
    # statement naming one thing ("the hydrocortisone + thiamine combo", "reinfection
    # in people who inject drugs") goes on with the topic in play.
    if message.asks:
        return message.word_count >= MIN_FULL_QUESTION_WORDS
    # A statement naming a drug or a condition and, beside it, words of its own
    # ("Donanemab amyloid clearance and ARIA risk") is a subject of its own; a few words
    # ("clarithromycin resistant strains") go on with the topic in play.
    return (
        bool(kinds & {"intervention", "condition"})
        and "topic" in kinds
        and message.word_count >= MIN_FULL_QUESTION_WORDS
    )


def _completes(thread: TopicReading, message: MessageReading) -> bool:
    """A question about the topic's outcome or treatment, under the same organisation."""
    if message.of("organisation") and message.subject():
        return False  # another organisation's own subject: a question of its own
    kinds = {v.kind for v in message.subject()}
    has = {v.kind for v in thread.subject()}
    if kinds <= {"topic"} and message.word_count < NEW_QUESTION_WORDS:
        return True  # "what does the label say about ARIA monitoring?"
    if kinds <= {"condition"} and "intervention" in has:
        return True
    if kinds <= {"intervention"} and "intervention" not in has:
        # A treatment for the condition in play, or one MeSH does not name ("how
        # effective are culling programs?" after invasive lionfish).
        unnamed = all(v.heading is None for v in message.subject())
        return "condition" in has or (unnamed and message.word_count < NEW_QUESTION_WORDS)
    return False


def _reread_for_message(value: SlotValue, message: MessageReading) -> SlotValue:
    """A value of the thread as the message's values show it to be: a name of unknown
    kind is an organisation when the message offers one in its place ("Novo Nordisk's?"
    after "Eli Lilly obesity pipeline"); a population word inside a condition gives way
    to the population the message names ("adults" after "childhood asthma")."""
    if value.kind == "topic" and is_name(value.text) and message.of("organisation"):
        return value.model_copy(update={"kind": "organisation"})
    if message.of("population") and value.kind in SUBJECT_KINDS:
        words = value.text.split()
        # "high school" after "undergrad physics": the level of schooling gives way too.
        schooling = any(_SCHOOLING.search(p.text) for p in message.of("population"))
        people = lex.POPULATION_ADJECTIVES | (lex.EDUCATION_LEVELS if schooling else frozenset())
        kept = [w for w in words if w.lower() not in people]
        if kept and len(kept) < len(words):
            return value.model_copy(update={"text": " ".join(kept), "heading": None})
    return value


_SCHOOLING = re.compile(r"\b(?:schools?|students|pupils|college|university|undergrad\w*)\b", re.I)
# An intervention and a comparator stand in for each other; words of no known kind
# ("topic", "aspect") for anything but the scope.
_ROLES = frozenset({"intervention", "comparator"})
_UNPLACED = frozenset({"topic", "aspect"})


def _taking_the_place(
    thread: TopicReading, message: MessageReading, incoming: list[SlotValue]
) -> dict[int, SlotValue]:
    """ "swap ustekinumab for tofacitinib", "omega-3 instead of vit D": the one value the
    message names takes the place (and the role) of the one it drops, by the id of the
    value it replaces."""
    dropped = [v for v in thread.values if is_dropped_by(v, message)]
    if len(dropped) != 1 or len(incoming) != 1:
        return {}
    old, new = dropped[0], incoming[0]
    stands_in = (
        new.kind == old.kind
        or {new.kind, old.kind} <= _ROLES
        or (new.kind in _UNPLACED and old.kind not in _SCOPE_KINDS)
    )
    if not stands_in:
        return {}
    return {id(old): _swapped_words(old, new, message) or new.model_copy(update={"kind": old.kind})}


def _took(value: SlotValue, placed: SlotValue) -> bool:
    return value.same_as(placed) or f" {value.text.lower()} " in f" {placed.text.lower()} "


def _swapped_words(old: SlotValue, new: SlotValue, message: MessageReading) -> SlotValue | None:
    """``old`` with the words the message drops replaced by the new value, when they are
    only part of it: "conditional ones rather than unconditional" after unconditional cash
    transfers gives conditional cash transfers."""
    words = old.text.split()
    lowered = [stem_word(w.lower()) for w in words]
    for dropped in message.dropped:
        said = [stem_word(w) for w in dropped.lower().split()]
        for at in range(len(lowered) - len(said) + 1):
            if lowered[at : at + len(said)] == said and len(said) < len(words):
                text = " ".join([*words[:at], new.text, *words[at + len(said) :]])
                return old.model_copy(update={"text": text, "heading": None})
    return None


def _update(thread: TopicReading, message: MessageReading) -> FollowUp:
    offered = offered_subject(thread, message)
    incoming = [as_follow_up_kind(thread, message, v) for v in message.values if v is not offered]
    incoming = [_named_in_full(thread, v) for v in incoming]
    taking = _taking_the_place(thread, message, incoming)
    if offered is not None:
        subject = next(v for v in thread.values if v.kind == "topic")
        taking[id(subject)] = offered
    values = [
        taking.get(id(v)) or _reread_for_message(v, message)
        for v in thread.values
        if id(v) in taking or not is_dropped_by(v, message)
    ]
    added: list[SlotValue] = list(taking.values())
    # A value that took another's place, whole or in its words, is no longer incoming.
    incoming = [v for v in incoming if not any(_took(v, t) for t in taking.values())]
    values, placed = place_siblings(values, incoming, message)
    added.extend(placed)
    named = [*incoming, *placed]  # what the message named, for how it reads
    incoming = [v for v in incoming if v not in placed]
    for kind in dict.fromkeys(v.kind for v in incoming):
        new = [v for v in incoming if v.kind == kind]
        values = _apply(values, kind, new, message, added)
    values = [v for v in values if not _named_again_as_scope(v, incoming, message)]
    if message.both and not any(v.kind in SUBJECT_KINDS for v in named):
        values = _with_the_other_one(values, thread.dropped)
    year_from, year_to = thread.year_from, thread.year_to
    if message.dated:
        year_from, year_to = message.year_from, message.year_to
    topic = TopicReading(values=bounded_values(values), year_from=year_from, year_to=year_to)
    topic.dropped = dropped_values([*thread.dropped, *thread.values], topic)
    only_scope = all(v.kind in _SCOPE_KINDS for v in named)
    if only_scope and (named or message.dated):
        reading: TurnReading = "slot_fill"
        reason = LIFTS_DATES if message.undated and not incoming else "only changes the scope"
    else:
        reading = "followup_continuation"
        reason = _reason(message, named)
    return FollowUp(
        reading,
        reason,
        topic,
        replaced=tuple(v for v in thread.values if not topic.has(v)),
        added=tuple(added),
    )


def _named_in_full(thread: TopicReading, value: SlotValue) -> SlotValue:
    """ "the test strips" after fentanyl test strips: a value named in part is the one the
    topic holds, in full."""
    if value.kind not in SUBJECT_KINDS:
        return value
    said = stems(value.text)
    fuller = [t for t in thread.subject() if said < stems(t.text)]
    return fuller[0] if len(fuller) == 1 else value


def _with_the_other_one(values: list[SlotValue], dropped: list[SlotValue]) -> list[SlotValue]:
    """``values`` with the subject a value in play last took the place of beside it:
    "infection risk with both" after "elranatamab instead" of teclistamab."""
    for old in reversed(dropped):
        at = next((i for i, v in enumerate(values) if v.kind == old.kind), None)
        if old.kind in SUBJECT_KINDS and at is not None:
            return [*values[: at + 1], old, *values[at + 1 :]]
    return values


def _named_again_as_scope(
    value: SlotValue, incoming: list[SlotValue], message: MessageReading
) -> bool:
    """Words of no known kind whose head a population or place the message names takes
    with another qualifier: "primary school" after "what about secondary school students"
    (not "coral bleaching" after "corals")."""
    if value.kind != "topic" or message.adds or len(value.text.split()) < 2:
        return False
    head = stems(value.text.split()[-1])
    return any(
        n.kind in ("population", "place")
        and head <= stems(n.text)
        and stems(n.text) - stems(value.text)
        and not value.same_as(n)
        for n in incoming
    )


def _apply(
    values: list[SlotValue],
    kind: SlotKind,
    new: list[SlotValue],
    message: MessageReading,
    added: list[SlotValue],
) -> list[SlotValue]:
    fresh = [v for v in new if not any(v.same_as(old) for old in values)]
    added.extend(fresh)
    if kind == "intervention" and message.compares:
        if all(_compared_against(v, message) for v in new):
            # "vs letrozole", "compared with insulin": the intervention in play stays;
            # the new one is what it is now compared with.
            against = [v.model_copy(update={"kind": "comparator"}) for v in new]
            return _in_place(values, "comparator", against)
        # "how does X compare?": X in place of the intervention in play, which becomes
        # what X is compared with.
        previous = [
            v.model_copy(update={"kind": "comparator"})
            for v in values
            if v.kind == "intervention" and not any(v.same_as(n) for n in new)
        ]
        values = [v for v in values if v.kind != "comparator"]
        return _in_place(values, "intervention", [*new, *previous])
    if kind == "topic" and message.compares and not any(v.kind == "intervention" for v in values):
        # "how does BiLSTM-CRF compare?" after transformer models: the first subject
        # words become what the new one is compared with.
        at = next((i for i, v in enumerate(values) if v.kind == "topic"), None)
        if at is not None and not any(v.same_as(values[at]) for v in new):
            compared = values[at].model_copy(update={"kind": "comparator"})
            return [*values[:at], *new, compared, *values[at + 1 :]]
    if message.adds or (kind == "aspect" and _asks_about_an_effect(values, new)):
        return [*values, *fresh]
    if kind == "intervention" and all(message.lead_of(v) in _ALONGSIDE for v in new):
        # "with protein supplementation" after resistance training: given together.
        return [*values, *fresh]
    if kind == "condition" and _said_of_the_people(new, message):
        # "in older adults with dementia?" after CBT-I for insomnia: who has the dementia,
        # beside the condition the topic is about.
        return [*values, *fresh]
    if kind == "population":
        values = _conditions_kept(values, new)
    if kind == "topic" and message.instead and not message.of("intervention"):
        # "accelerometers instead" after computer vision for lameness detection: the
        # first words of no known kind are the subject it takes the place of.
        at = next((i for i, v in enumerate(values) if v.kind == "topic"), None)
        if at is not None:
            return [*values[:at], *new, *values[at + 1 :]]
    return _in_place(values, kind, new, whole=message.instead)


def _said_of_the_people(new: list[SlotValue], message: MessageReading) -> bool:
    """Every condition the message names says what the people it names have ("older
    adults with dementia")."""
    return bool(message.of("population")) and all(message.lead_of(v) == "with" for v in new)


def _asks_about_an_effect(values: list[SlotValue], new: list[SlotValue]) -> bool:
    """ "risk factors?" after CAR-T neurotoxicity: a facet of the effect asked about (its
    risk factors, incidence, management), which stays, not another outcome in its place."""
    if not all(n.text.lower() in lex.FACETS for n in new):
        return False
    return any(v.kind == "aspect" and _names_an_effect(v.text) for v in values)


def _names_an_effect(text: str) -> bool:
    """An adverse effect or a disease: "neurotoxicity", "genital infections"."""
    words = text.lower().split()
    if not words or text.lower() in lex.FACETS:
        return False
    last = words[-1]
    organ_toxicity = last.endswith("toxicity") and last != "toxicity"
    return organ_toxicity or is_condition_word(last) or mesh_kind(text)[0] == "condition"


_PEOPLE_WITH = re.compile(
    r"^(?P<people>.+?)\s+(?:with|living with|who have)\s+(?P<condition>.+)$", re.I
)


def _conditions_kept(values: list[SlotValue], new: list[SlotValue]) -> list[SlotValue]:
    """``values`` with the condition of a population named by it kept as a condition when
    other people take the population's place and it is the topic's only condition: "and in
    children?" after metformin in adults with type 2 diabetes searches type 2 diabetes in
    children."""
    if any(_PEOPLE_WITH.match(n.text) for n in new) or any(v.kind == "condition" for v in values):
        # The message names it ("and in adults with type 1 diabetes?"), or the topic has a
        # condition of its own and the one of the people went with them (tuberculosis
        # "in people with HIV", then "what about in children").
        return values
    kept: list[SlotValue] = []
    for value in values:
        kept.append(value)
        said = _PEOPLE_WITH.match(value.text) if value.kind == "population" else None
        if said is not None:
            kept.append(SlotValue(kind="condition", text=said.group("condition")))
    return kept


def _compared_against(value: SlotValue, message: MessageReading) -> bool:
    """The message puts ``value`` on the other side of a comparison ("vs letrozole")."""
    pattern = lex.COMPARED_AGAINST + re.escape(value.text) + r"\b"
    return re.search(pattern, message.text, re.I) is not None


def _in_place(
    values: list[SlotValue], kind: SlotKind, new: list[SlotValue], *, whole: bool = False
) -> list[SlotValue]:
    """``values`` with those of ``kind`` replaced by ``new``, where the first of them
    stood (at the end when there was none): "dogs" gives way to "cats" in place. A
    procedure replaces a procedure and a drug a drug: "what about knee arthroplasty"
    after tranexamic acid in hip fracture surgery keeps the tranexamic acid; a name
    ("Madrigal") replaces a name, not the words of a topic."""

    def replaced(value: SlotValue) -> bool:
        family = whole or not new or any(same_family(value, n) for n in new)
        return value.kind == kind and family

    matching = [i for i, v in enumerate(values) if replaced(v)]
    if kind == "condition" and len(matching) >= 2 and len(new) == 1:
        # One condition for two (an exposure and its outcome): the later one gives way,
        # "diabetes?" after periodontitis and cardiovascular disease.
        last = matching[-1]
        return [*values[:last], *new, *values[last + 1 :]]
    at = matching[0] if matching else len(values)
    before = [v for v in values[:at] if not replaced(v)]
    after = [v for v in values[at:] if not replaced(v)]
    return [*before, *new, *after]


def _reason(message: MessageReading, incoming: list[SlotValue]) -> str:
    if message.compares and any(v.kind == "intervention" for v in incoming):
        return "compares another intervention with the one in play"
    if message.adds:
        return "adds to the topic"
    if incoming and all(v.kind == "aspect" for v in incoming):
        return "asks about an aspect of the topic"
    if not incoming:
        return "names no topic of its own"
    return "replaces part of the topic"
