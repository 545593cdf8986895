"""Literature sources: one module per source, behind the ``LiteratureSource`` protocol.

Importing this package registers every built-in source.
"""

from scholarstream.sources import (  # noqa: F401  (imported to register)
    arxiv,
    clinicaltrials,
    crossref,
    openalex,
    pubmed,
    semantic_scholar,
    serpapi_scholar,
)
from scholarstream.sources.base import (
    DateKind,
    LiteratureSource,
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    build_source,
    check_filters,
    register_source,
    source_names,
)
from scholarstream.sources.http import RateLimiter, RetryPolicy, SourceHttp
from scholarstream.sources.hub import MultiSearchResult, SourceHub, SourceStatus

__all__ = [
    "DateKind",
    "LiteratureSource",
    "MultiSearchResult",
    "RateLimiter",
    "RetryPolicy",
    "SearchPage",
    "SearchQuery",
    "SourceContext",
    "SourceHttp",
    "SourceHub",
    "SourceInfo",
    "SourceStatus",
    "build_source",
    "check_filters",
    "register_source",
    "source_names",
]
