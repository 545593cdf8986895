"""The id a found paper keeps across the iterations of a run, so a mark given in one
iteration still means the same paper in the next."""

from __future__ import annotations

import hashlib

from scholarstream.papers._identifiers import normalize_title
from scholarstream.papers._model import Record

# Most stable first: a DOI names the work wherever it was found.
_ID_ORDER = ("doi", "pmid", "nct_id", "pmcid", "arxiv_id", "openalex_id", "s2_id")


def paper_key(record: Record) -> str:
    ids = record.ids
    for name in _ID_ORDER:
        value = getattr(ids, name)
        if value:
            return f"{name.removesuffix('_id')}:{value}"
    basis = f"{normalize_title(record.title)}|{record.year or ''}"
    return "title:" + hashlib.sha256(basis.encode()).hexdigest()[:16]


def record_sources(record: Record) -> list[str]:
    """The sources that returned the record (in a search: those of this search)."""
    return list(dict.fromkeys(p.source for p in record.provenance if not p.origin))


def record_origins(record: Record) -> list[str]:
    """Where a record a search found in the library was before: the file formats it was
    imported from ("ris", "csv", "pubmed" for PubMed XML) or the sources it was saved from."""
    return list(dict.fromkeys(p.source for p in record.provenance if p.origin))
