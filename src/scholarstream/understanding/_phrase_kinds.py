"""The kind of a phrase of a message, from the word lists: a drug or procedure
(intervention), a condition, an aspect, a name or other topic words; and where a run of
words splits into values of their own ("SGLT2 inhibitors | euglycemic ketoacidosis")."""

from __future__ import annotations

import re

from scholarstream.understanding import _lexicon as lex
from scholarstream.understanding._mesh_kinds import (
    is_surgical_procedure,
    kind_of_match,
    mesh_kind,
    mesh_match,
)
from scholarstream.understanding._slot_kind import SlotKind


def is_procedure(text: str) -> bool:
    """Whether an intervention is a procedure (surgery, an operation, a device put in)
    rather than a drug: "hip fracture surgery", "knee arthroplasty", "dialysis"."""
    head = text.lower().split()[-1] if text.split() else ""
    if head in lex.PROCEDURE_HEADS or head.endswith(lex.PROCEDURE_SUFFIXES):
        return True
    return is_surgical_procedure(text)


def is_name(text: str) -> bool:
    """A proper name: every word capitalised, not written in capitals only ("Ontario",
    "Sunshine Health"; not "ICER")."""
    words = text.split()
    return bool(words) and all(w[:1].isupper() and not w.isupper() for w in words)


def phrase_parts(chunk: str) -> list[tuple[int, str, SlotKind]]:
    """A chunk as one value, or several: a drug's name before a condition
    ("dapagliflozin heart failure"), and aspect words after a condition or an
    intervention ("cytokine release syndrome rates": the condition, and "rates")."""
    words = chunk.split()
    # A name MeSH knows is one value: "alcohol use disorder", "insulin resistance".
    if len(words) > 1 and is_intervention_word(words[0].lower()) and mesh_match(chunk) is None:
        rest = " ".join(words[1:])
        # Not "insulin therapy" (one intervention) nor "taurine deficiency" (a condition).
        if kind_of_phrase(rest) != "intervention" and rest.lower() not in lex.CONDITION_HEADS:
            shift = len(words[0]) + 1
            parts = [(shift + offset, part, kind) for offset, part, kind in phrase_parts(rest)]
            return [(0, words[0], "intervention"), *parts]
    for at in range(1, len(words) - 1):
        # A phrase headed by "therapy", "inhibitors", ... ends there: "SGLT2 inhibitors |
        # euglycemic ketoacidosis", "prolonged exposure therapy | PTSD".
        # So does one headed by "disease", "syndrome", ...: "Alzheimer's disease |
        # cardiovascular outcomes".
        word = words[at].lower()
        head_kind: SlotKind | None = (
            "intervention"
            if word in lex.INTERVENTION_HEADS
            else "condition"
            if word in lex.CONDITION_HEADS
            else None
        )
        rest = " ".join(words[at + 1 :])
        follows = (
            ("condition", "aspect", "topic") if head_kind == "intervention" else ("topic", "aspect")
        )
        if head_kind is not None and kind_of_phrase(rest) in follows:
            head = " ".join(words[: at + 1])
            shift = len(head) + 1
            parts = [(shift + offset, part, kind) for offset, part, kind in phrase_parts(rest)]
            return [(0, head, head_kind), *parts]
    for size in range(min(4, len(words)), 1, -1):
        # A regulatory pathway is one value: "accelerated approval", not "accelerated" and
        # the aspect "approval".
        for start in range(len(words) - size + 1):
            phrase = " ".join(words[start : start + size])
            if phrase.lower() in lex.PATHWAYS:
                before = " ".join(words[:start])
                after = " ".join(words[start + size :])
                shift = len(before) + 1 if before else 0
                tail_at = shift + len(phrase) + 1
                return [
                    *(phrase_parts(before) if before else []),
                    (shift, phrase, "topic"),
                    *[(tail_at + o, p, k) for o, p, k in (phrase_parts(after) if after else [])],
                ]
    tail = 0
    while tail < len(words) - 1 and words[len(words) - 1 - tail].lower() in lex.ASPECT_WORDS:
        tail += 1
    whole = mesh_match(chunk)
    # "insulin resistance" is a condition of its own, not insulin and its resistance.
    if tail and (whole is None or kind_of_match(whole) is None):
        core = " ".join(words[: len(words) - tail])
        core_kind = kind_of_phrase(core)
        if core_kind == "topic" and _names_people(core):
            return [(0, chunk, "aspect")]  # "infant outcomes": what is measured, in whom
        if core_kind is not None:
            aspect = " ".join(words[len(words) - tail :])
            return [(0, core, core_kind), (len(core) + 1, aspect, "aspect")]
    kind = kind_of_phrase(chunk)
    return [] if kind is None else [(0, chunk, kind)]


def named_parts(chunk: str) -> list[tuple[int, str, SlotKind]]:
    """``phrase_parts``, with a name of two words or more that opens the chunk a value of its
    own ("Eli Lilly | obesity pipeline", "Novo Nordisk | semaglutide")."""
    words = chunk.split()
    run = 0
    while run < len(words) and words[run][:1].isupper() and not words[run].isupper():
        run += 1
    # A single capitalised word is no name here ("Escherichia coli", "Duchenne ...").
    if 2 <= run < len(words):
        following = words[run].lower()
        if following not in lex.CONDITION_HEADS:  # not "Crohn disease"
            name = " ".join(words[:run])
            shift = len(name) + 1
            rest = [(shift + o, part, kind) for o, part, kind in phrase_parts(chunk[shift:])]
            return [(0, name, "topic"), *rest]
    return phrase_parts(chunk)


def _names_people(phrase: str) -> bool:
    """MeSH names ``phrase`` whole as a population ("infant", "patients")."""
    kind, heading = mesh_kind(phrase)
    return kind == "population" and heading is not None


# "72 weeks", "5-10 years", "12-month follow-up": when an outcome is measured.
_DURATION = re.compile(
    r"^\d+(?:\s*[-\u2013]\s*\d+)?[-\s]?(?:days?|weeks?|months?|years?|yrs?|wks?)"
    r"(?:\s+(?:follow-?up|outcomes?|results?|data))?$",
    re.I,
)


def kind_of_phrase(chunk: str) -> SlotKind | None:
    words = chunk.lower().split()
    if all(w.rstrip("+%").isdigit() for w in words):
        return None
    if _DURATION.match(chunk.strip()):
        return "aspect"
    if chunk.lower() in lex.ASPECT_FORMS:
        return "aspect"
    if (
        len(words) == 1
        and words[0].endswith(lex.ASPECT_SUFFIXES[:4])
        and not (is_condition_word(words[0]) or is_intervention_word(words[0]))
    ):
        return "aspect"  # "portability", "effectiveness", "adherence", "persistence"
    head = words[-1]
    if all(w in lex.ASPECT_WORDS for w in words):
        return "aspect"
    if len(words) > 1 and head in lex.ASPECT_WORDS:
        return "aspect"
    if head == "acid" and len(words) > 1 and words[-2] in lex.NON_DRUG_ACIDS:
        return "topic"  # "uric acid"
    if len(words) == 1 and head in lex.GENERIC_INTERVENTIONS:
        return "aspect"  # "interventions in nursing homes": which kind, not which one
    if head in lex.INTERVENTION_HEADS:
        return "intervention"
    if head in ("aid", "aids") and len(words) > 1 and not chunk.split()[-1].isupper():
        return "intervention"  # "hearing aids", not AIDS
    if head in lex.CONDITION_HEADS or is_condition_word(head):
        return "condition"
    if any(is_intervention_word(w) for w in words):
        return "intervention"
    if any(is_condition_word(w) for w in words):
        return "condition"
    return "topic"


def is_intervention_word(word: str) -> bool:
    bare = word.strip(".,")
    if bare in lex.INTERVENTION_WORDS:
        return True
    return len(bare) > 6 and bare.endswith(lex.DRUG_SUFFIXES)


def is_condition_word(word: str) -> bool:
    bare = word.strip(".,")
    if bare in lex.CONDITION_WORDS:
        return True
    return len(bare) > 5 and bare.endswith(lex.CONDITION_SUFFIXES)
