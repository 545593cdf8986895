"""Citations read from an answer: which sentence cites which pack keys, and references the
model wrote itself (a DOI, a PMID, an author and year) that no key stands for."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from scholarstream.grounding.core._pack import LARGEST_KEY, EvidencePack
from scholarstream.papers import Author, normalize_doi, normalize_pmid

# [3], [1, 4], [2-5], [1; 7]; not a markdown link "[3](url)".
_DASH = "\u2013-"  # en dash or hyphen
_MARKER = re.compile(rf"\[(\d{{1,4}}(?:\s*[,;{_DASH}]\s*\d{{1,4}})*)\](?!\()")
_NUMBER = re.compile(r"\d+")
# A bracket holding 0 or a year-sized number is an interval or a year ("[0, 1]",
# "[2019]"), not a citation.
_LARGEST_KEY = LARGEST_KEY
# A range wider than this is not a citation anybody meant ("[1-200]").
_MAX_RANGE = 30
# A sentence ends at . ! or ? followed by space and a capital, digit, bracket or quote, or
# at a line break (list items, headings and paragraphs end their sentence); not after an
# abbreviation ("et al.", "e.g.", "Fig.").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[\"'“])|\n+")
_ABBREVIATION = re.compile(
    r"(?:\bet al|\be\.g|\bi\.e|\bvs|\bcf|\bFigs?|\bapprox|\bno|\bref)\.$", re.I
)
_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
# A DOI may hold balanced parentheses ("10.1016/S0140-6736(20)30183-5"), never brackets.
_DOI = re.compile(r"\b10\.\d{4,9}/(?:[^\s\[\]()<>\"',;]|\([^\s()\[\]]*\))+")
_PMID = re.compile(r"\bPMID:?\s*(\d{4,9})\b", re.IGNORECASE)
_NAME = "[A-Z][a-z][A-Za-z'\u2019-]*"  # a name, not an acronym (WHO, NIH)
# "Smith et al., 2019", "Smith and Lee (2020)", "(Smith, 2018)": a reference by author and year.
_AUTHOR_YEAR = re.compile(
    rf"\b({_NAME}(?:\s+(?:et al\.?|and|&)\s*(?:{_NAME})?)?),?\s+\(?((?:19|20)\d\d)\)?"
)


class CitedSentence(BaseModel):
    """One sentence of an answer with the keys it cites (possibly none)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    text: str
    keys: list[int]
    start: int
    end: int


class Marker(BaseModel):
    """A citation marker as written, with the keys it names and the sentence it belongs to."""

    model_config = ConfigDict(extra="forbid")

    start: int
    end: int
    keys: list[int]
    sentence: int


class ForeignReference(BaseModel):
    """A reference the answer wrote itself: it is not a pack key and cannot be checked."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["doi", "pmid", "author_year"]
    text: str
    start: int
    end: int


def _keys(inner: str) -> list[int] | None:
    """The keys a marker names; ``None`` when it is not a citation (see ``_LARGEST_KEY``).
    A part "a-b" is a range; a chain "1-3-5" names its numbers."""
    keys: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inner):
        numbers = [int(n) for n in _NUMBER.findall(part)]
        if any(n == 0 or n > _LARGEST_KEY for n in numbers):
            return None
        if len(numbers) == 2 and numbers[0] <= numbers[1] <= numbers[0] + _MAX_RANGE:
            keys.extend(range(numbers[0], numbers[1] + 1))
        else:
            keys.extend(numbers)
    return list(dict.fromkeys(keys))


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in _SENTENCE_END.finditer(text):
        if "\n" not in cut.group(0) and _ABBREVIATION.search(text[start : cut.start()]):
            continue
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _has_claim(text: str) -> bool:
    return bool(_MARKER.sub("", text).strip(" \t\n.,;:!?"))


def _owner(text: str, spans: list[tuple[int, int]], index: int, start: int) -> int:
    """The sentence a marker at ``start`` in sentence ``index`` cites for: its own, unless
    the marker opens it on the same line ("... reduced mortality. [2]") or the sentence
    is nothing but markers (a line "[2]"): then the nearest sentence before with a claim;
    failing that, the first sentence with one."""
    own_start = spans[index][0]
    opens = not _MARKER.sub("", text[own_start:start]).strip()
    same_line = index > 0 and "\n" not in text[spans[index - 1][1] : own_start]
    if _has_claim(text[own_start : spans[index][1]]) and not (opens and same_line):
        return index
    earlier = [i for i in range(index - 1, -1, -1) if _has_claim(text[slice(*spans[i])])]
    later = [i for i in range(index, len(spans)) if _has_claim(text[slice(*spans[i])])]
    return (earlier or later or [index])[0]


def _without(text: str, start: int, end: int, markers: list[Marker]) -> str:
    """``text[start:end]`` without the citation markers in it."""
    parts, at = [], start
    for marker in markers:
        parts.append(text[at : marker.start])
        at = marker.end
    parts.append(text[at:end])
    return "".join(parts)


def read_markers(text: str) -> tuple[list[CitedSentence], list[Marker]]:
    """The answer's sentences and its citation markers, each marker with the sentence it
    cites for (``_owner``)."""
    spans = _sentence_spans(text)
    markers: list[Marker] = []
    for match in _MARKER.finditer(text):
        keys = _keys(match.group(1))
        index = next((i for i, (a, b) in enumerate(spans) if a <= match.start() < b), None)
        if keys is None or index is None:
            continue
        index = _owner(text, spans, index, match.start())
        markers.append(Marker(start=match.start(), end=match.end(), keys=keys, sentence=index))
    sentences = []
    for index, (a, b) in enumerate(spans):
        keys = [k for m in markers if m.sentence == index for k in m.keys]
        inside = [m for m in markers if a <= m.start < b]
        plain = _BEFORE_PUNCTUATION.sub(r"\1", " ".join(_without(text, a, b, inside).split()))
        if plain:
            sentences.append(
                CitedSentence(
                    index=index, text=plain, keys=list(dict.fromkeys(keys)), start=a, end=b
                )
            )
    return sentences, markers


def _surname(author: Author) -> str:
    return (author.family or author.name.split()[-1]).lower()


def _works_by_year(pack: EvidencePack) -> set[tuple[str, int | None]]:
    """(surname, year) of every author of every record: how an author-year names a work."""
    return {
        (_surname(author), item.paper.year) for item in pack.items for author in item.paper.authors
    }


def _in_pack(name: str, year: int, works: set[tuple[str, int | None]]) -> bool:
    return (name, year) in works or (name, None) in works


def foreign_references(text: str, pack: EvidencePack) -> list[ForeignReference]:
    """DOIs, PMIDs and author-year references in ``text`` that match no record of the
    pack: the model wrote them itself, so they are flagged, never shown as citations."""
    dois = {item.paper.ids.doi for item in pack.items if item.paper.ids.doi}
    pmids = {item.paper.ids.pmid for item in pack.items if item.paper.ids.pmid}
    works = _works_by_year(pack)
    found: list[ForeignReference] = []
    for match in _DOI.finditer(text):
        written = match.group(0).rstrip(".")
        if normalize_doi(written) not in dois:
            end = match.start() + len(written)
            found.append(ForeignReference(kind="doi", text=written, start=match.start(), end=end))
    for match in _PMID.finditer(text):
        if normalize_pmid(match.group(1)) not in pmids:
            found.append(
                ForeignReference(
                    kind="pmid", text=match.group(0), start=match.start(), end=match.end()
                )
            )
    for match in _AUTHOR_YEAR.finditer(text):
        written = match.group(0)
        opened = match.start() > 0 and text[match.start() - 1] == "("
        if written.endswith(")") and "(" not in written:
            written = written[:-1]  # the close of "(Smith et al., 2019)", not of the year
        name = match.group(1).split()[0].lower()
        looks_cited = "et al" in written or "(" in written or opened
        known = _in_pack(name, int(match.group(2)), works)
        if looks_cited and not known and not _inside(match.start(), found):
            ref = ForeignReference(
                kind="author_year",
                text=written,
                start=match.start(),
                end=match.start() + len(written),
            )
            found.append(ref)
    return sorted(found, key=lambda ref: ref.start)


def _inside(position: int, refs: list[ForeignReference]) -> bool:
    return any(ref.start <= position < ref.end for ref in refs)
