"""A project's records with their decisions, as RIS, BibTeX or CSV.

The record itself is written by the product's own writers (``papers.formats``: the same
fields every export has); the decision is added to what they wrote: RIS notes (``N1``,
which Zotero, EndNote, Covidence and Rayyan keep), BibTeX fields (``screening_decision``
...: Zotero keeps unknown fields in Extra), and CSV columns after the record's.

Two ids, never one for the other: ``record_id`` is the record's id in the project (the one
the records list, the screening view and every API route that takes a record use), written
as the CSV's ``record_id`` column, a ``Screening record id`` RIS note and a
``screening_record_id`` BibTeX field; ``source_record_id`` is the record's own id where it
came from (an imported file's RIS ``ID``, BibTeX key, EndNote rec-number or CSV ID, a
PMID), which the RIS and BibTeX writers keep in their own places (``ID``, the entry's key)."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from scholarstream.papers import Record
from scholarstream.papers.formats import (
    CSV_COLUMNS,
    spreadsheet_safe,
    text_to_latex,
    write_bibtex,
    write_csv,
    write_ris,
)

ID_COLUMNS: tuple[str, ...] = ("record_id", "source_record_id")
"""The CSV's first columns: the record's id in the project, then its own id where it came
from (the library export's ``record_id`` column, renamed; empty when it had none)."""

DECISION_COLUMNS: tuple[str, ...] = (
    "decision",
    "reason",
    "reviewer",
    "score",
    "full_text_decision",
    "full_text_reason",
)
"""The CSV columns after the record's (``CSV_COLUMNS``)."""


@dataclass(frozen=True)
class DecisionRow:
    """What an export says about one record's screening."""

    decision: str
    reason: str | None
    reviewers: str
    score: float | None
    full_text_decision: str | None = None
    full_text_reason: str | None = None
    record_id: uuid.UUID = field(kw_only=True)
    """The record's id in the project (``ScreeningRecord.id``)."""

    def cells(self) -> list[str]:
        return [
            self.decision,
            self.reason or "",
            self.reviewers,
            "" if self.score is None else f"{self.score:.3f}",
            self.full_text_decision or "",
            self.full_text_reason or "",
        ]

    def labelled(self) -> list[tuple[str, str]]:
        """(label, value) for what is known, in the columns' order, the record's id first."""
        names = (
            "Screening record id",
            "Screening decision",
            "Screening reason",
            "Screening reviewers",
            "Screening score",
            "Full-text decision",
            "Full-text reason",
        )
        values = [str(self.record_id), *self.cells()]
        return [(name, value) for name, value in zip(names, values, strict=True) if value]


Exported = tuple[Record, DecisionRow]


def _insert_before(text: str, marker: Callable[[str], bool], extra: Sequence[list[str]]) -> str:
    """Puts ``extra[i]``'s lines before the i-th line of ``text`` that ``marker`` accepts."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    for line in lines:
        if marker(line) and index < len(extra):
            out.extend(extra[index])
            index += 1
        out.append(line)
    if index != len(extra):  # pragma: no cover - the writers end every record with one
        raise AssertionError("an exported record has no end marker")
    return "\n".join(out)


def write_ris_with_decisions(rows: Sequence[Exported], out: TextIO) -> int:
    buffer = io.StringIO()
    count = write_ris([record for record, _ in rows], buffer)
    notes = [
        [f"N1  - {label}: {' '.join(value.split())}" for label, value in row.labelled()]
        for _, row in rows
    ]
    out.write(_insert_before(buffer.getvalue(), lambda line: line.startswith("ER  -"), notes))
    return count


def _bibtex_field(name: str, value: str) -> str:
    return f"  {name} = {{{text_to_latex(' '.join(value.split()))}}},"


def write_bibtex_with_decisions(rows: Sequence[Exported], out: TextIO) -> int:
    buffer = io.StringIO()
    count = write_bibtex([record for record, _ in rows], buffer)
    fields = [
        [
            _bibtex_field("screening_record_id", str(row.record_id)),
            *(
                _bibtex_field(f"screening_{name}" if not name.startswith("full") else name, value)
                for name, value in zip(DECISION_COLUMNS, row.cells(), strict=True)
                if value
            ),
        ]
        for _, row in rows
    ]
    out.write(_insert_before(buffer.getvalue(), lambda line: line == "}", fields))
    return count


def write_csv_with_decisions(rows: Sequence[Exported], out: TextIO) -> int:
    buffer = io.StringIO()
    count = write_csv([record for record, _ in rows], buffer)
    reader = csv.reader(io.StringIO(buffer.getvalue().removeprefix("\ufeff")))
    header = next(reader)
    assert tuple(header) == CSV_COLUMNS
    assert header[0] == "record_id"
    writer = csv.writer(out, lineterminator="\n")
    out.write("\ufeff")
    # The file's own id goes on as source_record_id; record_id is the project's.
    writer.writerow([*ID_COLUMNS, *header[1:], *DECISION_COLUMNS])
    for cells, (_, row) in zip(reader, rows, strict=True):
        writer.writerow(
            [str(row.record_id), *cells, *(spreadsheet_safe(cell) for cell in row.cells())]
        )
    return count


DECISION_WRITERS: dict[str, Callable[[Sequence[Exported], TextIO], int]] = {
    "ris": write_ris_with_decisions,
    "bibtex": write_bibtex_with_decisions,
    "csv": write_csv_with_decisions,
}
"""Export format name -> its writer with decisions."""
