"""A run's papers as a bibliographic file (RIS, BibTeX, CSV, JSON)."""

from __future__ import annotations

from typing import Literal, TextIO

from scholarstream.papers.formats import get_format
from scholarstream.search.core._models import PaperCollection

ExportSelection = Literal["all", "relevant"]


def export_collection(
    collection: PaperCollection,
    format_name: str,
    out: TextIO,
    *,
    only: ExportSelection = "all",
) -> int:
    """Writes the papers best first; ``relevant``: only those the user marked relevant."""
    file_format = get_format(format_name, for_export=True)
    assert file_format.write is not None  # get_format(for_export=True) guarantees it
    papers = collection.papers
    if only == "relevant":
        papers = [p for p in papers if p.label == "relevant"]
    return file_format.write([p.record for p in papers], out)
