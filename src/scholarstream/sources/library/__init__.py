"""The local library: the records each user imported, searchable offline."""

from scholarstream.sources.library.index import IndexCache, LibraryIndex
from scholarstream.sources.library.library import Library
from scholarstream.sources.library.models import (
    ImportProblem,
    ImportReport,
    LibraryItem,
    LibraryPage,
    LibraryQuery,
)
from scholarstream.sources.library.source import LibrarySource

__all__ = [
    "ImportProblem",
    "ImportReport",
    "IndexCache",
    "Library",
    "LibraryIndex",
    "LibraryItem",
    "LibraryPage",
    "LibraryQuery",
    "LibrarySource",
]
