"""A report's items as a bibliographic file, through the paper search's exporter."""

from __future__ import annotations

from typing import TextIO

from scholarstream.search.core import PaperCollection, ScoredPaper, export_collection
from scholarstream.streams.monitoring._report import Report


def report_collection(report: Report) -> PaperCollection:
    """The report as a paper-search collection (items best first, with their reasons)."""
    return PaperCollection(
        question=report.stream_name,
        papers=[
            ScoredPaper(
                id=item.key,
                record=item.record,
                score=item.score,
                reason=item.reason,
                sources=item.sources,
            )
            for item in report.items
        ],
    )


def export_report(report: Report, format_name: str, out: TextIO) -> int:
    """Writes the items best first in ``format_name`` (ris, bibtex, csv, json); how many."""
    return export_collection(report_collection(report), format_name, out)
