"""The local library: the records each user imported, searchable offline."""

from scholarstream.sources.library._fusion import Fusion
from scholarstream.sources.library._importer import import_items
from scholarstream.sources.library._index import IndexCache, LibraryIndex, query_tokens, tokenize
from scholarstream.sources.library._library import Library
from scholarstream.sources.library._models import (
    MAX_OFFSET,
    DuplicateScan,
    FacetCount,
    ImportProblem,
    ImportReport,
    LibraryFacets,
    LibraryItem,
    LibraryMergeInfo,
    LibraryPage,
    LibraryQuery,
    MergedRecord,
    MergePage,
    SplitResult,
)
from scholarstream.sources.library._semantic import SemanticStatus, embedding_passages
from scholarstream.sources.library._source import INFO as LIBRARY_INFO
from scholarstream.sources.library._source import LibrarySource
from scholarstream.sources.library._vectors import IN_PROCESS, PGVECTOR, stored_vectors

__all__ = [
    "IN_PROCESS",
    "LIBRARY_INFO",
    "MAX_OFFSET",
    "PGVECTOR",
    "DuplicateScan",
    "FacetCount",
    "Fusion",
    "ImportProblem",
    "ImportReport",
    "IndexCache",
    "Library",
    "LibraryFacets",
    "LibraryIndex",
    "LibraryItem",
    "LibraryMergeInfo",
    "LibraryPage",
    "LibraryQuery",
    "LibrarySource",
    "MergePage",
    "MergedRecord",
    "SemanticStatus",
    "SplitResult",
    "embedding_passages",
    "import_items",
    "query_tokens",
    "stored_vectors",
    "tokenize",
]
