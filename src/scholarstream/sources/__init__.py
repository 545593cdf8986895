"""Literature sources: one module per source, behind the ``LiteratureSource`` protocol.

Importing this package registers every built-in source.
"""

from scholarstream.sources import (  # noqa: F401  (imported to register)
    _arxiv,
    _clinicaltrials,
    _crossref,
    _openalex,
    _pubmed,
    _semantic_scholar,
    _serpapi_scholar,
)
from scholarstream.sources._arxiv import ArxivSource
from scholarstream.sources._base import (
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
from scholarstream.sources._clinicaltrials import NAME as CLINICALTRIALS
from scholarstream.sources._clinicaltrials import PHASES as TRIAL_PHASES
from scholarstream.sources._clinicaltrials import STATUSES as TRIAL_STATUSES
from scholarstream.sources._clinicaltrials import (
    TrialPhase,
    TrialStatus,
    search_params,
    trial_from_study,
)
from scholarstream.sources._connectivity import (
    OFFLINE_NOTICE,
    Connectivity,
    SourceUnreachableError,
    connectivity_scope,
)
from scholarstream.sources._crossref import CrossrefSource, jats_to_text
from scholarstream.sources._failures import (
    FailureCause,
    SourceFailedError,
    failure_words,
)
from scholarstream.sources._http import Params, RateLimiter, RetryPolicy, SourceHttp
from scholarstream.sources._hub import MultiSearchResult, SourceHub, SourceStatus
from scholarstream.sources._openalex import OpenAlexSource, rebuild_abstract
from scholarstream.sources._semantic_scholar import SemanticScholarSource
from scholarstream.sources._serpapi_scholar import ScholarSource, parse_summary

__all__ = [
    "CLINICALTRIALS",
    "OFFLINE_NOTICE",
    "TRIAL_PHASES",
    "TRIAL_STATUSES",
    "ArxivSource",
    "Connectivity",
    "CrossrefSource",
    "DateKind",
    "FailureCause",
    "LiteratureSource",
    "MultiSearchResult",
    "OpenAlexSource",
    "Params",
    "RateLimiter",
    "RetryPolicy",
    "ScholarSource",
    "SearchPage",
    "SearchQuery",
    "SemanticScholarSource",
    "SourceContext",
    "SourceFailedError",
    "SourceHttp",
    "SourceHub",
    "SourceInfo",
    "SourceStatus",
    "SourceUnreachableError",
    "TrialPhase",
    "TrialStatus",
    "build_source",
    "check_filters",
    "connectivity_scope",
    "failure_words",
    "jats_to_text",
    "parse_summary",
    "rebuild_abstract",
    "register_source",
    "search_params",
    "source_names",
    "trial_from_study",
]
