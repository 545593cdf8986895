"""Citations read from an answer: which sentence cites which pack keys, and references the
model wrote itself (a DOI, a PMID, an author and year) that no key stands for."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from scholarstream.grounding.core._pack import EvidencePack
from scholarstream.papers import normalize_doi, normalize_pmid

# [3], [1, 4], [2-5], [1; 7]; not a markdown link "[3](url)" nor a footnote "[^3]".
_DASH = "\u2013-"  # en dash or hyphen
_MARKER = re.compile(rf"\[(\d{{1,4}}(?:\s*[,;{_DASH}]\s*\d{{1,4}})*)\](?!\()")
_RANGE = re.compile(rf"(\d+)\s*[{_DASH}]\s*(\d+)")
# A range wider than this is not a citation anybody meant ("[1-2000]").
_MAX_RANGE = 30
# A sentence ends at . ! or ? followed by space and a capital, digit, bracket or quote, or
# at a line break (list items, headings and paragraphs end their sentence).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[\"'“])|\n+")
_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\]\)>,;\"']+[^\s\]\)>,;\"'.]")
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


def _keys(inner: str) -> list[int]:
    keys: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inner):
        span = _RANGE.fullmatch(part)
        if span is None:
            keys.append(int(part))
            continue
        low, high = int(span.group(1)), int(span.group(2))
        if low <= high <= low + _MAX_RANGE:
            keys.extend(range(low, high + 1))
        else:
            keys.extend((low, high))
    return list(dict.fromkeys(keys))


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in _SENTENCE_END.finditer(text):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def read_markers(text: str) -> tuple[list[CitedSentence], list[Marker]]:
    """The answer's sentences and its citation markers. A marker that opens a sentence
    ("... reduced mortality. [2]") belongs to the sentence before it."""
    spans = _sentence_spans(text)
    markers: list[Marker] = []
    for match in _MARKER.finditer(text):
        if match.start() > 0 and text[match.start() - 1] in "^!":
            continue
        index = next((i for i, (a, b) in enumerate(spans) if a <= match.start() < b), None)
        if index is None:
            continue
        opens = not _MARKER.sub("", text[spans[index][0] : match.start()]).strip()
        if opens and index > 0:
            index -= 1
        markers.append(
            Marker(start=match.start(), end=match.end(), keys=_keys(match.group(1)), sentence=index)
        )
    sentences = []
    for index, (a, b) in enumerate(spans):
        keys = [k for m in markers if m.sentence == index for k in m.keys]
        plain = _BEFORE_PUNCTUATION.sub(r"\1", " ".join(_MARKER.sub("", text[a:b]).split()))
        if plain:
            sentences.append(
                CitedSentence(
                    index=index, text=plain, keys=list(dict.fromkeys(keys)), start=a, end=b
                )
            )
    return sentences, markers


def foreign_references(text: str, pack: EvidencePack) -> list[ForeignReference]:
    """DOIs, PMIDs and author-year references in ``text`` that match no record of the
    pack: the model wrote them itself, so they are flagged, never shown as citations."""
    dois = {item.paper.ids.doi for item in pack.items if item.paper.ids.doi}
    pmids = {item.paper.ids.pmid for item in pack.items if item.paper.ids.pmid}
    authors = {
        (author.family or author.name).lower()
        for item in pack.items
        for author in item.paper.authors[:1]
    }
    found: list[ForeignReference] = []
    for match in _DOI.finditer(text):
        if normalize_doi(match.group(0)) not in dois:
            found.append(
                ForeignReference(
                    kind="doi", text=match.group(0), start=match.start(), end=match.end()
                )
            )
    for match in _PMID.finditer(text):
        if normalize_pmid(match.group(1)) not in pmids:
            found.append(
                ForeignReference(
                    kind="pmid", text=match.group(0), start=match.start(), end=match.end()
                )
            )
    for match in _AUTHOR_YEAR.finditer(text):
        written = match.group(0)
        if written.endswith(")") and "(" not in written:
            written = written[:-1]  # the close of "(Smith et al., 2019)", not of the year
        name = match.group(1).split()[0].lower()
        looks_cited = "et al" in written or "(" in written
        if looks_cited and name not in authors and not _inside(match.start(), found):
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
