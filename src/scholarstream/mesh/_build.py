"""From MeSH records (a descriptor's id, name, tree numbers and entry terms) to the rows of
the vocabulary: each descriptor with the lookup keys that lead to it.

The same rules serve ``scripts/build_mesh.py`` (which writes the package's data file) and
a vocabulary read from a file named in the settings, so both look terms up alike:

- keys are ``normalize``d; a term with an abbreviation also gets a case-kept key;
- a permuted entry term ("Cancer, Gastric") is kept in its natural order only
  ("gastric cancer"); an inverted name keeps both ("diabetes mellitus type 2",
  "type 2 diabetes mellitus");
- terms longer than ``MAX_TERM_LENGTH`` (systematic chemical names nobody types) are left out;
- the head part of an inverted term ("Computed Tomography, X-Ray" -> "computed
  tomography") is a key when it has two words or more and no other descriptor claims it;
- a key that several descriptors claim goes to the one whose name it is, then to the one
  whose name it inverts, then to an entry term's descriptor, the first by id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scholarstream.mesh._text import case_key, has_abbreviation, natural_orders, normalize

MAX_TERM_LENGTH = 60
FORMAT = "scholarstream-mesh 1"


@dataclass(frozen=True)
class MeshRecord:
    """A descriptor as a source file gives it."""

    id: str
    name: str
    tree_numbers: tuple[str, ...] = ()
    entry_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class MeshRow:
    """A descriptor with its lookup keys (lower case; case-kept ones for abbreviations)."""

    id: str
    name: str
    tree_numbers: tuple[str, ...]
    keys: tuple[str, ...]
    case_keys: tuple[str, ...] = ()

    def line(self) -> str:
        return "\t".join(
            [self.id, self.name, ";".join(self.tree_numbers), "|".join(self.keys),
             "|".join(self.case_keys)]
        )  # fmt: skip

    @classmethod
    def parse(cls, line: str) -> MeshRow:
        ui, name, trees, keys, case_keys = line.rstrip("\n").split("\t")
        return cls(
            ui,
            name,
            tuple(trees.split(";")) if trees else (),
            tuple(keys.split("|")) if keys else (),
            tuple(case_keys.split("|")) if case_keys else (),
        )


HEAD_PART = 3


def _forms(record: MeshRecord) -> list[tuple[int, str]]:
    """(priority, term) of every wording of a record: 0 its name, 1 the name's natural
    orders, 2 entry terms (permuted ones in natural order), 3 the head part of an inverted
    term of two words or more ("Computed Tomography, X-Ray" -> "Computed Tomography"), kept
    only when no other descriptor claims it."""
    forms = [(0, record.name)] + [(1, form) for form in natural_orders(record.name)]
    for term in (record.name, *record.entry_terms):
        term = " ".join(term.split())
        if not term or len(term) > MAX_TERM_LENGTH:
            continue
        natural = natural_orders(term)
        if term != record.name:
            forms.append((2, natural[0] if natural else term))
        head = term.split(", ", 1)[0]
        if natural and len(head.split()) >= 2:
            forms.append((HEAD_PART, head))
    return forms


def _above_all(records: list[MeshRecord], claimants: set[int]) -> int | None:
    """The claimant above most of the others in the tree (at least half of them, and more
    than any other claimant is): "computed tomography" names Tomography, X-Ray Computed,
    above Spiral, Cone-Beam, Four-Dimensional and Multidetector Computed Tomography."""

    def above(candidate: int, other: int) -> bool:
        roots = records[candidate].tree_numbers
        return any(n.startswith(f"{r}.") for n in records[other].tree_numbers for r in roots)

    counts = {c: sum(above(c, o) for o in claimants - {c}) for c in claimants}
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    best, most = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else -1
    if most * 2 >= len(claimants) - 1 and most > runner_up:
        return best
    return None


def build_rows(records: Iterable[MeshRecord]) -> list[MeshRow]:
    """The rows of a vocabulary, each key given to one descriptor only."""
    records = list(records)
    owners: dict[str, tuple[int, int]] = {}
    case_owners: dict[str, tuple[int, int]] = {}
    forms_of: list[list[tuple[int, str]]] = []
    for index, record in enumerate(records):
        forms = _forms(record)
        forms_of.append(forms)
        for priority, term in forms:
            for key, table in ((normalize(term), owners), (case_key(term), case_owners)):
                if table is case_owners and not has_abbreviation(term):
                    continue
                if key and (key not in table or (priority, index) < table[key]):
                    table[key] = (priority, index)
    # A head part claimed by two descriptors or more goes to the one above all the others
    # in the tree, else to none.
    claims: dict[str, set[int]] = {}
    for index, forms in enumerate(forms_of):
        for priority, term in forms:
            if priority == HEAD_PART:
                claims.setdefault(normalize(term), set()).add(index)
    ambiguous: set[str] = set()
    for key, claimants in claims.items():
        if len(claimants) < 2:
            continue
        top = _above_all(records, claimants)
        if top is None or owners.get(key, (0, -1))[0] != HEAD_PART:
            ambiguous.add(key)
        else:
            owners[key] = (HEAD_PART, top)
    rows = []
    for index, record in enumerate(records):
        keys: dict[str, None] = {}
        cased: dict[str, None] = {}
        for priority, term in forms_of[index]:
            key = normalize(term)
            if priority == HEAD_PART and (key in ambiguous or owners[key][0] != HEAD_PART):
                continue
            if key and owners[key][1] == index:
                keys.setdefault(key)
            if has_abbreviation(term):
                cased_key = case_key(term)
                if case_owners.get(cased_key, (0, -1))[1] == index:
                    cased.setdefault(cased_key)
        rows.append(MeshRow(record.id, record.name, record.tree_numbers, tuple(keys), tuple(cased)))
    return rows
