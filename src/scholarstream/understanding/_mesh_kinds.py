"""What MeSH says a phrase is: its heading, and the slot kind its place in the tree gives
(a disease is a condition, a drug or a procedure an intervention, an organism or a group
of persons a population, a geographic name a place). The packaged vocabulary is read on
the first lookup."""

from __future__ import annotations

import functools
import re

from scholarstream.mesh import MeshMatch, MeshVocabulary, singular_word
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._synonyms import group_of

# Tree branches and the kind they give, most specific first.
TREE_KINDS: tuple[tuple[str, SlotKind], ...] = (
    ("F03", "condition"),  # mental disorders
    ("F01.145", "condition"),  # behaviours: smoking, drinking, what a treatment targets
    ("C", "condition"),  # diseases
    ("D", "intervention"),  # chemicals and drugs
    ("E02", "intervention"),  # therapeutics
    ("E04", "intervention"),  # surgical procedures
    ("E07", "intervention"),  # equipment and supplies
    ("B01", "population"),  # organisms
    ("M01", "population"),  # persons
    ("Z01", "place"),  # geographic locations
)


@functools.cache
def _vocabulary() -> MeshVocabulary:
    return MeshVocabulary.load()


def mesh_match(text: str) -> MeshMatch | None:
    """The descriptor ``text`` names (its name or an entry term), if any."""
    return _vocabulary().lookup(text)


def mesh_spelled(text: str) -> MeshMatch | None:
    """The descriptor ``text`` names in any spelling MeSH reads ("hospitalisation" is
    Hospitalization, "SGLT2 inhibitor" the plural heading), no near matches."""
    return _vocabulary().match(text, fuzzy=False)


def is_mesh_word(word: str) -> bool:
    """Whether a heading's name holds ``word`` (a real word, however rare: "patents")."""
    lowered = word.lower()
    return bool(_vocabulary().named_with({singular_word(lowered) or lowered}))


@functools.cache
def _drug_as_meant(word: str) -> str:
    return _vocabulary().drug_spelled(word) or word


_LOWER_WORD = re.compile(r"\b[a-z]{7,}\b")


def drugs_as_meant(text: str) -> str:
    """``text`` with each word that misspells a drug by one slip, when MeSH knows no such
    word, put right ("metfromin" is metformin)."""
    return _LOWER_WORD.sub(lambda m: _drug_as_meant(m.group(0)), text)


def kind_of_match(match: MeshMatch) -> SlotKind | None:
    for prefix, kind in TREE_KINDS:
        if any(number.startswith(prefix) for number in match.descriptor.tree_numbers):
            return kind
    return None


def mesh_kind(text: str) -> tuple[SlotKind | None, str | None]:
    """The kind MeSH gives ``text`` and its heading; a phrase MeSH does not know is read
    by its last word ("PBO nets" by "nets") for the kind only."""
    match = mesh_match(text) or mesh_spelled(text) or _by_synonym(text)
    if match is not None:
        return kind_of_match(match), match.heading
    words = text.split()
    if len(words) > 1:
        head = mesh_match(words[-1]) or mesh_spelled(words[-1])
        if head is not None:
            return kind_of_match(head), None
    return None, None


def _by_synonym(text: str) -> MeshMatch | None:
    """The disease a standard abbreviation or wording stands for ("afib", "TBI"); a
    measure's ("HbA1c") heading files it as a chemical, which it is not here."""
    group = group_of(text)
    if group is None:
        return None
    found = next((m for m in map(mesh_spelled, group.members) if m is not None), None)
    return found if found is not None and kind_of_match(found) == "condition" else None


# Body regions and the musculoskeletal system: "knee" and "hip", "wrist" and "ankle".
_BODY_PARTS = ("A01", "A02")
_SURGICAL_PROCEDURES = ("E04",)


def _in_branch(text: str, branches: tuple[str, ...]) -> bool:
    match = mesh_match(text)
    return match is not None and any(n.startswith(branches) for n in match.descriptor.tree_numbers)


def is_body_part(word: str) -> bool:
    return _in_branch(word, _BODY_PARTS)


# Occupational groups: "nurses", "physicians", "farmers".
_OCCUPATIONS = ("M01.526",)


def is_occupation(text: str) -> bool:
    """MeSH files ``text`` under occupational groups: a word before it names the field
    ("emergency physicians", "oncology nurses"), not a condition the people have."""
    return _in_branch(text, _OCCUPATIONS)


def is_surgical_procedure(text: str) -> bool:
    """MeSH files ``text`` under surgical procedures ("hip replacement")."""
    return _in_branch(text, _SURGICAL_PROCEDURES)


# Kin in the tree: headings under one heading this many levels down (Escherichia coli and
# Klebsiella under Enterobacteriaceae), neither above the other.
_KIN_LEVELS = 4


def are_tree_kin(a: str, b: str) -> bool:
    """Whether two headings are siblings or cousins in MeSH's tree."""
    first, second = _vocabulary().descriptor(a), _vocabulary().descriptor(b)
    if first is None or second is None or first.name == second.name:
        return False
    for x in first.tree_numbers:
        for y in second.tree_numbers:
            if x.startswith(y) or y.startswith(x):
                return False
            if _shared_levels(x, y) >= _KIN_LEVELS:
                return True
    return False


def _shared_levels(x: str, y: str) -> int:
    """How many levels two tree numbers share from the top ("B03.440" and "B03.510": 1)."""
    shared = 0
    for left, right in zip(x.split("."), y.split("."), strict=False):
        if left != right:
            break
        shared += 1
    return shared
