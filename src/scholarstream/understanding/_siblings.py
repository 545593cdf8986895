"""Siblings: a value of a follow-up that takes the place of its kin inside the topic
("potassium-ion" for "sodium-ion", "hip" for "knee", "type 2" for "type 1", "classical
swine fever" for "African swine fever"), and "X instead", which puts X where the main
subject stood."""

from __future__ import annotations

import re

from scholarstream.mesh import singular_word
from scholarstream.understanding._mesh_kinds import are_tree_kin, is_body_part, mesh_spelled
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._topic import (
    SUBJECT_KINDS,
    MessageReading,
    SlotValue,
    same_family,
)

# Kinds whose values a sibling takes the place of, word for word.
_SIBLING_KINDS: frozenset[SlotKind] = frozenset(
    {"intervention", "condition", "topic", "population", "comparator", "aspect"}
)


def place_siblings(
    values: list[SlotValue], incoming: list[SlotValue], message: MessageReading
) -> tuple[list[SlotValue], list[SlotValue]]:
    """The topic with each incoming value put where its sibling stood, and the values so
    placed. A sibling is a word of the same family ("potassium-ion" for "sodium-ion",
    "hip" for "knee"), or a phrase with the same head ("classical swine fever" for
    "African swine fever"); "X instead" takes the place of the main subject (the first
    intervention, else the first topic words) when the usual replacement of X's kind
    would not: no value of its kind, or a drug where a procedure stood."""
    if message.adds or message.compares:
        return values, []
    placed: list[SlotValue] = []
    for value in incoming:
        swapped = _swapped(values, value) or _tree_kin(values, value)
        if swapped is None and message.instead and value.kind in SUBJECT_KINDS:
            swapped = _instead(values, value)
        if swapped is not None:
            values = swapped
            placed.append(value)
    return values, placed


def _swapped(values: list[SlotValue], value: SlotValue) -> list[SlotValue] | None:
    new_words = value.text.split()
    for at, old in enumerate(values):
        if old.kind not in _SIBLING_KINDS or old.same_as(value):
            continue
        old_words = old.text.split()
        if len(new_words) == 1:
            for index, word in enumerate(old_words):
                if _same_family(word, new_words[0]) or _same_code(word, new_words[0]):
                    text = " ".join([*old_words[:index], new_words[0], *old_words[index + 1 :]])
                    swapped = old.model_copy(update={"text": text, "heading": None})
                    return [*values[:at], swapped, *values[at + 1 :]]
        numbered = _numbered_swap(old.text, value.text)
        if numbered is not None:  # "type 2" for "type 1 diabetes"
            swapped = old.model_copy(update={"text": numbered, "heading": None})
            return [*values[:at], swapped, *values[at + 1 :]]
        head = [w.lower() for w in new_words[-2:]]
        if (
            len(new_words) >= 2
            and len(old_words) >= 2
            and head == [w.lower() for w in old_words[-2:]]
        ):
            return [*values[:at], value.model_copy(update={"kind": old.kind}), *values[at + 1 :]]
        if value.kind == "population" and _compound_kin(old.text, value.text):
            # "solitary bees" after "wild bumblebee colonies"
            return [*values[:at], value.model_copy(update={"kind": old.kind}), *values[at + 1 :]]
        inside = head_inside(old.text, value.text)
        if inside is not None:  # "classical swine fever" in "African swine fever vaccine"
            swapped = old.model_copy(update={"text": inside, "heading": None})
            return [*values[:at], swapped, *values[at + 1 :]]
    return None


def head_inside(old: str, new: str) -> str | None:
    """``old`` with the phrase inside it that has ``new``'s head (its words after the
    first) under another first word put in ``new``'s place: "classical swine fever" in
    "African swine fever vaccine" gives "classical swine fever vaccine". A head of one
    word only counts at the start of ``old`` and when MeSH names both phrases ("lung
    cancer" in "breast cancer screening"; never "alcohol use" in "social media use")."""
    old_words, new_words = old.split(), new.split()
    head = [w.lower() for w in new_words[1:]]
    if not head or len(old_words) < len(new_words):
        return None
    lowered = [w.lower() for w in old_words]
    for start in range(1, len(old_words) - len(head) + 1):
        if lowered[start : start + len(head)] != head:
            continue
        if lowered[start - 1] == new_words[0].lower():
            return None
        said = " ".join(old_words[start - 1 : start + len(head)])
        if len(head) == 1 and (
            start != 1 or mesh_spelled(said) is None or mesh_spelled(new) is None
        ):
            return None
        return " ".join([*old_words[: start - 1], *new_words, *old_words[start + len(head) :]])
    return None


def _tree_kin(values: list[SlotValue], value: SlotValue) -> list[SlotValue] | None:
    """``value`` in the place of a value whose heading is its kin in MeSH's tree: an
    organism for an organism ("Klebsiella" for "Escherichia coli")."""
    if value.heading is None:
        return None
    for at, old in enumerate(values):
        if old.heading is not None and are_tree_kin(old.heading, value.heading):
            placed = value.model_copy(update={"kind": old.kind})
            return [*values[:at], placed, *values[at + 1 :]]
    if value.kind not in _SPLICED_KINDS:
        return None  # "in tropical climates" is where, never a word inside "heat stress"
    for at, old in enumerate(values):
        if old.kind == value.kind:
            continue  # a value of the same kind is replaced whole
        spliced = _kin_inside(old.text, value)
        if spliced is not None:
            swapped = old.model_copy(update={"text": spliced, "heading": None})
            return [*values[:at], swapped, *values[at + 1 :]]
    return None


# Kinds whose values MeSH's kin may splice into another value: a disease, a drug, an
# organism ("sorghum" for "maize" in "drought tolerant maize varieties").
_SPLICED_KINDS = frozenset({*SUBJECT_KINDS, "population"})


def _kin_inside(old: str, value: SlotValue) -> str | None:
    """``old`` with a phrase inside it that is ``value``'s kin in MeSH's tree put in its
    place: "ventral hernias" in "laparoscopic inguinal hernia repair" gives "laparoscopic
    ventral hernias repair" (Hernia, Inguinal and Hernia, Ventral)."""
    words = old.split()
    if len(words) < 2 or value.heading is None:
        return None
    for size in range(len(words) - 1, 0, -1):
        for start in range(len(words) - size + 1):
            match = mesh_spelled(" ".join(words[start : start + size]))
            if match is not None and are_tree_kin(match.heading, value.heading):
                return " ".join([*words[:start], value.text, *words[start + size :]])
    return None


_NUMBERED = re.compile(r"^([A-Za-z]+)\s+(\d+[a-z]?|[IV]+)$")


def _numbered_swap(old: str, new: str) -> str | None:
    """``old`` with its "<word> <number>" replaced by ``new`` of the same word ("type 1
    diabetes" and "type 2": "type 2 diabetes"; "stage 3 CKD" and "stage 4")."""
    said = _NUMBERED.match(new.strip())
    if said is None:
        return None
    word, number = said.groups()
    pattern = re.compile(rf"\b{re.escape(word)}\s+(\d+[a-z]?|[IV]+)\b", re.I)
    found = pattern.search(old)
    if found is None or found.group(1).lower() == number.lower():
        return None
    return old[: found.start()] + new.strip() + old[found.end() :]


def _instead(values: list[SlotValue], value: SlotValue) -> list[SlotValue] | None:
    same = [i for i, v in enumerate(values) if v.kind == value.kind]
    if value.kind == "intervention" and any(same_family(values[i], value) for i in same):
        return None  # a drug for a drug: replaced the usual way
    if value.kind != "intervention" and same:
        return None
    kinds = ("intervention",) if same else ("intervention", "topic")
    at = next((i for i, v in enumerate(values) if v.kind in kinds), None)
    if at is None:
        return None
    return [*values[:at], value.model_copy(update={"kind": values[at].kind}), *values[at + 1 :]]


# Letters a head needs to be read inside a compound ("bee" in "bumblebee").
_COMPOUND_HEAD = 3


def _compound_kin(old: str, new: str) -> bool:
    """``new``'s head ends a compound word of ``old``: "bees" and "bumblebee colonies",
    "children" and "schoolchildren"."""
    head = singular_word(new.split()[-1].lower()) or new.split()[-1].lower()
    if len(head) < _COMPOUND_HEAD:
        return False
    words = [singular_word(w.lower()) or w.lower() for w in old.split()]
    return any(w != head and w.endswith(head) and len(w) > len(head) + 2 for w in words)


def _same_code(old: str, new: str) -> bool:
    """Two codes of one shape and the same first letter: mutations ("G12C", "G12D"),
    grades ("X52", "X70"), subtypes ("H5N1", "H7N9")."""
    if old.lower() == new.lower() or old[:1].lower() != new[:1].lower():
        return False
    return _shape(old) == _shape(new) and any(c.isdigit() for c in old) and len(old) <= 8


def _shape(code: str) -> str:
    """ "G12C" -> "a9a": letters and digits, each run as one mark."""
    marks = ["9" if c.isdigit() else "a" if c.isalpha() else c for c in code]
    return "".join(m for i, m in enumerate(marks) if i == 0 or m != marks[i - 1])


def _same_family(old: str, new: str) -> bool:
    """Words of one family: the same ending after a hyphen ("sodium-ion",
    "potassium-ion"; "bacteria-based", "microcapsule-based") or two body parts."""
    old, new = old.lower(), new.lower()
    if old == new:
        return False
    old_stem, old_dash, old_end = old.rpartition("-")
    new_stem, new_dash, new_end = new.rpartition("-")
    if old_dash and new_dash and old_stem and new_stem:
        return old_end == new_end and old_end.isalpha()  # not "GLP-1" and "PD-1"
    return not old_dash and not new_dash and is_body_part(old) and is_body_part(new)
