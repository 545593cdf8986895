"""The kind a value takes in a follow-up, given the conversation's topic: a condition not
named as the indication is an outcome asked about, a word of no known kind offered on its
own stands in for the subject, a name after "in" says where; and the words two values
share, or that a message drops."""

from __future__ import annotations

import re

from scholarstream.mesh import singular_word
from scholarstream.understanding import _lexicon as lex
from scholarstream.understanding._mesh_kinds import are_tree_kin
from scholarstream.understanding._phrase_kinds import is_name
from scholarstream.understanding._siblings import head_inside
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._topic import MessageReading, SlotValue, TopicReading

# The kinds a capitalised name stands for, in order.
NAMED: tuple[SlotKind, ...] = ("place", "organisation")
# Leads that make a condition the topic's condition ("in heart failure", "for psoriasis").
INDICATION_LEADS = frozenset({"in", "for", "with", "among", "against", "during", "after"})
# "what did they decide on semaglutide?": the drug is what is asked about, not an effect.
_SUBJECT_LEADS = frozenset({"on", "about", "regarding", "concerning"})


def as_follow_up_kind(thread: TopicReading, message: MessageReading, value: SlotValue) -> SlotValue:
    """The kind a value takes in a follow-up.

    - A condition not named as the indication ("any data on CRS rates?") is an outcome:
      an aspect. So is a drug or procedure asked about as an effect of the topic ("do
      they increase smoking initiation?").
    - A word of unknown kind offered on its own terms ("and fisetin?", "how does X
      compare?") stands in for the conversation's intervention (or its main subject);
      other unknown words ask about an aspect.
    """
    lead = message.lead_of(value)
    if value.kind == "condition" and thread.of("condition") and thread.of("intervention"):
        bare = len(message.values) == 1 and message.elliptical
        kin = any(_kin(old, value) for old in thread.values)
        if lead not in INDICATION_LEADS and not bare and not message.adds and not kin:
            return value.model_copy(update={"kind": "aspect"})
    if (
        value.kind == "intervention"
        and thread.of("intervention")
        and message.refers_back
        and not _named_before_the_reference(value, message)
        and not (message.compares or message.adds)
        and lead not in INDICATION_LEADS | _SUBJECT_LEADS
    ):
        return value.model_copy(update={"kind": "aspect"})
    if value.kind == "intervention" and _qualifies_the_one_in_play(thread, value, message):
        return value.model_copy(update={"kind": "aspect"})
    if value.kind == "topic" and thread.subject():
        return _unknown_in_follow_up(thread, message, value, lead)
    return value


def _kin(old: SlotValue, new: SlotValue) -> bool:
    """``new`` is a sibling of ``old`` or of a phrase inside it: the two headings are kin
    in MeSH's tree, or the two phrases share a head ("classical swine fever" and "African
    swine fever vaccine")."""
    if old.heading and new.heading and are_tree_kin(old.heading, new.heading):
        return True
    return head_inside(old.text, new.text) is not None


# Leads before words of no known kind that say where: "in the NHS", "across Europe".
_SETTING_LEADS = frozenset({"in", "across", "throughout", "within"})


def _named_before_the_reference(value: SlotValue, message: MessageReading) -> bool:
    """ "pfizer's danuglipron, why was it discontinued": the value is what "it" refers
    to, not an effect of the drug in play. A reference that is what a verb of effect acts
    on ("does giving zoledronate afterwards prevent it") is the effect asked about."""
    said = message.text.lower()
    at = said.find(value.text.lower())
    if at < 0:
        return False
    references = [m for m in _REFERENCE.finditer(said) if m.start() > at]
    return bool(references) and not any(m.group(1) for m in references)


_REFERENCE = re.compile(
    r"(?:\b(" + "|".join(sorted(lex.EFFECT_VERBS)) + r")\s+)?"
    r"\b(?:it|they|them|its|their|this|that|these|those)\b"
)


# Letters two forms of one word share: "vaccination" and "vaccine".
_STEM_LETTERS = 6


def _qualifies_the_one_in_play(
    thread: TopicReading, value: SlotValue, message: MessageReading
) -> bool:
    """A kind of intervention said of the one in play, not another one: "seasonal
    vaccination schedules" after the R21 malaria vaccine (no heading, a generic head, the
    same word as the intervention's)."""
    words = value.text.lower().split()
    if value.heading or message.instead or words[-1] not in lex.INTERVENTION_HEADS:
        return False
    if lex.WHAT_ABOUT.match(message.text) and len(message.values) == 1:
        return False  # "what about MDMA-assisted therapy": another one, offered on its own
    stem = words[-1][:_STEM_LETTERS]
    return any(
        w.startswith(stem) for v in thread.of("intervention") for w in v.text.lower().split()
    )


def _unknown_in_follow_up(
    thread: TopicReading, message: MessageReading, value: SlotValue, lead: str
) -> SlotValue:
    """A phrase no word list or MeSH places. A name offered on its own ("and Quebec?",
    "what about Pfizer", "and in Scotland, SMC?") stands in for the topic's place or
    organisation. Anything else asks about an aspect of the topic: it is added, and
    replaces the previous aspect."""
    if message.adds or message.instead:  # "tobacco taxes instead": a subject, no aspect
        return value
    if any(is_dropped_by(v, message) for v in thread.subject()):
        return value  # "forget nanoparticles - focused ultrasound ...": the new subject
    offered = not lead and (message.elliptical or message.compares)
    if offered and (is_name(value.text) or value.text.isupper()):
        # A capitalised name is a place or an organisation where the topic has one; an
        # acronym is not a place. Otherwise it names a subject ("what about Madrigal").
        kinds: tuple[SlotKind, ...] = ("organisation",) if value.text.isupper() else NAMED
        for kind in kinds:
            if thread.of(kind):
                return value.model_copy(update={"kind": kind})
        if is_name(value.text):
            return value
    if lead in _SETTING_LEADS and value.text.lower() not in lex.LATIN_SETTINGS:
        # "in the NHS", "in low-income settings": where, not what is asked about.
        return value.model_copy(update={"kind": "place"})
    if offered and message.compares and len(message.values) == 1:
        # "how does finerenone compare?": what the one in play is compared with, whatever
        # its kind; never an aspect that would replace the outcome asked about.
        return (
            value.model_copy(update={"kind": "intervention"})
            if thread.of("intervention")
            else value
        )
    return value.model_copy(update={"kind": "aspect"})


def offered_subject(thread: TopicReading, message: MessageReading) -> SlotValue | None:
    """ "what about permeable pavements?" after green roofs for stormwater retention: a
    thing of its own offered in place of a subject no word list places (the topic has no
    intervention), not an aspect of it."""
    if lex.WHAT_ABOUT.match(message.text) is None or len(message.values) != 1:
        return None
    value = message.values[0]
    if value.kind != "topic" or message.lead_of(value) or len(value.text.split()) < 2:
        return None
    if thread.of("intervention") or not thread.of("topic") or message.adds:
        return None
    return value


def is_dropped_by(value: SlotValue, message: MessageReading) -> bool:
    """Whether the message takes ``value`` out ("forget Roche", "instead of vit D")."""
    said = SlotValue(kind=value.kind, text=value.text)
    return any(
        shares_a_word(said, SlotValue(kind=value.kind, text=text))
        or _ends_a_compound(value.text, text)
        for text in message.dropped
    )


# Letters a word needs to be read as the end of a compound ("phone" in "smartphone").
_COMPOUND_END = 4


def _ends_a_compound(value: str, dropped: str) -> bool:
    """ "phones" ends "smartphone bans": a word said of the value's compound."""
    ends = {w for w in stems(dropped) if len(w) >= _COMPOUND_END} - GENERIC_STEMS
    return any(w != end and w.endswith(end) for w in stems(value) for end in ends)


def shares_a_word(a: SlotValue, b: SlotValue) -> bool:
    """Whether two values share a word that names something ("glyphosate exposure" and
    "prenatal chlorpyrifos exposure" share none)."""
    shared = stems(a.text) & stems(b.text)
    return bool(shared - GENERIC_STEMS)


def stems(text: str) -> set[str]:
    """The words of ``text``, lower case, plural or singular alike ("nanoparticles" and
    "nanoparticle", "cyclones" and "cyclone", "microplastics" and "microplastic")."""
    return {stem_word(w) for w in text.lower().split()}


def stem_word(word: str) -> str:
    # Words in -ics are plurals ("antibiotics") as often as not ("genetics"); a stem
    # only compares words, so both read the same either way.
    return singular_word(word) or (word[:-1] if word.endswith("ics") else word)


GENERIC_STEMS = frozenset(singular_word(w) or w for w in lex.GENERIC_SUBJECT_WORDS)
