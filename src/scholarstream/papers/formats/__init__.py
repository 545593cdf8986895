"""Bibliographic file formats. Importing this package registers every built-in format
(content sniffing tries them in this order)."""

from scholarstream.papers.formats import (  # noqa: F401  (imported to register)
    bibtex,
    csv_format,
    endnote_xml,
    json_format,
    medline,
    pubmed_xml,
    ris,
)
from scholarstream.papers.formats.base import (
    FileFormat,
    ReadItem,
    RecordProblem,
    detect_format,
    export_format_names,
    formats,
    get_format,
    import_format_names,
    open_records,
    read_file,
    read_stream,
    register_format,
)
from scholarstream.papers.formats.csv_format import spreadsheet_safe

__all__ = [
    "FileFormat",
    "ReadItem",
    "RecordProblem",
    "detect_format",
    "export_format_names",
    "formats",
    "get_format",
    "import_format_names",
    "open_records",
    "read_file",
    "read_stream",
    "register_format",
    "spreadsheet_safe",
]
