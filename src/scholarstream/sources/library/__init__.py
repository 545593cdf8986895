"""The local library: the records each user imported, searchable offline."""

from scholarstream.sources.library._exporter import Export
from scholarstream.sources.library._fusion import Fusion
from scholarstream.sources.library._importer import import_items
from scholarstream.sources.library._index import IndexCache, LibraryIndex, query_tokens, tokenize
from scholarstream.sources.library._library import Library
from scholarstream.sources.library._merge_ids import short_id
from scholarstream.sources.library._models import (
    MAX_OFFSET,
    CollectionChange,
    CollectionCount,
    CollectionInfo,
    CollectionRef,
    DuplicateCopy,
    DuplicateGroup,
    DuplicateScan,
    ExportAdvice,
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
    NothingMatchedError,
    SplitResult,
    TagChange,
)
from scholarstream.sources.library._organizer import LibraryLabels
from scholarstream.sources.library._semantic import SemanticStatus, embedding_passages
from scholarstream.sources.library._source import INFO as LIBRARY_INFO
from scholarstream.sources.library._source import LibrarySource
from scholarstream.sources.library._vectors import IN_PROCESS, PGVECTOR, stored_vectors

__all__ = [
    "IN_PROCESS",
    "LIBRARY_INFO",
    "MAX_OFFSET",
    "PGVECTOR",
    "CollectionChange",
    "CollectionCount",
    "CollectionInfo",
    "CollectionRef",
    "DuplicateCopy",
    "DuplicateGroup",
    "DuplicateScan",
    "Export",
    "ExportAdvice",
    "FacetCount",
    "Fusion",
    "ImportProblem",
    "ImportReport",
    "IndexCache",
    "Library",
    "LibraryFacets",
    "LibraryIndex",
    "LibraryItem",
    "LibraryLabels",
    "LibraryMergeInfo",
    "LibraryPage",
    "LibraryQuery",
    "LibrarySource",
    "MergePage",
    "MergedRecord",
    "NothingMatchedError",
    "SemanticStatus",
    "SplitResult",
    "TagChange",
    "embedding_passages",
    "import_items",
    "query_tokens",
    "short_id",
    "stored_vectors",
    "tokenize",
]
