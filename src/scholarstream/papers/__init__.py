"""Literature records, their identifiers, and the file formats they move in."""

from scholarstream.papers._identifiers import (
    normalize_arxiv_id,
    normalize_doi,
    normalize_nct_id,
    normalize_openalex_id,
    normalize_orcid,
    normalize_pmcid,
    normalize_pmid,
    normalize_s2_id,
    normalize_title,
)
from scholarstream.papers._keys import paper_key, record_origins, record_sources
from scholarstream.papers._model import (
    Author,
    Identifiers,
    Intervention,
    Link,
    Outcome,
    Paper,
    Provenance,
    Record,
    Retraction,
    Trial,
)

__all__ = [
    "Author",
    "Identifiers",
    "Intervention",
    "Link",
    "Outcome",
    "Paper",
    "Provenance",
    "Record",
    "Retraction",
    "Trial",
    "normalize_arxiv_id",
    "normalize_doi",
    "normalize_nct_id",
    "normalize_openalex_id",
    "normalize_orcid",
    "normalize_pmcid",
    "normalize_pmid",
    "normalize_s2_id",
    "normalize_title",
    "paper_key",
    "record_origins",
    "record_sources",
]
