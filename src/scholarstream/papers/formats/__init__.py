"""Bibliographic file formats. Importing this package registers every built-in format."""

from scholarstream.papers.formats.base import (
    FileFormat,
    ReadItem,
    RecordProblem,
    detect_format,
    export_format_names,
    formats,
    get_format,
    import_format_names,
    read_file,
    read_stream,
    register_format,
)

__all__ = [
    "FileFormat",
    "ReadItem",
    "RecordProblem",
    "detect_format",
    "export_format_names",
    "formats",
    "get_format",
    "import_format_names",
    "read_file",
    "read_stream",
    "register_format",
]
