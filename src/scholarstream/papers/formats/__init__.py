"""Bibliographic file formats. Importing this package registers every built-in format
(content sniffing tries them in this order)."""

from scholarstream.papers.formats import (  # noqa: F401  (imported to register)
    _bibtex,
    _csv_format,
    _endnote_xml,
    _json_format,
    _medline,
    _pubmed_xml,
    _ris,
)
from scholarstream.papers.formats._base import (
    SNIFF_BYTES,
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
from scholarstream.papers.formats._bibtex import (
    latex_to_text,
    read_bibtex,
    text_to_latex,
    write_bibtex,
)
from scholarstream.papers.formats._csv_format import COLUMNS as CSV_COLUMNS
from scholarstream.papers.formats._csv_format import read_csv, spreadsheet_safe, write_csv
from scholarstream.papers.formats._endnote_xml import read_endnote_xml
from scholarstream.papers.formats._json_format import read_json, write_json
from scholarstream.papers.formats._medline import read_medline
from scholarstream.papers.formats._pubmed_xml import (
    RECORD_TAGS,
    paper_from_pubmed,
    sniff_pubmed_xml,
)
from scholarstream.papers.formats._ris import read_ris, write_ris

__all__ = [
    "CSV_COLUMNS",
    "RECORD_TAGS",
    "SNIFF_BYTES",
    "FileFormat",
    "ReadItem",
    "RecordProblem",
    "detect_format",
    "export_format_names",
    "formats",
    "get_format",
    "import_format_names",
    "latex_to_text",
    "open_records",
    "paper_from_pubmed",
    "read_bibtex",
    "read_csv",
    "read_endnote_xml",
    "read_file",
    "read_json",
    "read_medline",
    "read_ris",
    "read_stream",
    "register_format",
    "sniff_pubmed_xml",
    "spreadsheet_safe",
    "text_to_latex",
    "write_bibtex",
    "write_csv",
    "write_json",
    "write_ris",
]
