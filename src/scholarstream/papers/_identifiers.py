"""Normalising the identifiers that literature records carry.

Every ``normalize_*`` function returns the canonical form or ``None`` when the text holds no
valid identifier of that kind; they never raise, because records from files and sources are
often messy and a bad identifier must not cost the rest of the record.
"""

from __future__ import annotations

import re

_DOI = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_DOI_PREFIXES = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_PMID = re.compile(r"^\d{1,9}$")
_PMCID = re.compile(r"^(?:PMC)?(\d{1,9})$", re.IGNORECASE)
_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?")
_ARXIV_OLD = re.compile(r"([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.IGNORECASE)
_ARXIV_PREFIXES = re.compile(
    r"^(?:https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/|arxiv:\s*)", re.IGNORECASE
)
_NCT = re.compile(r"NCT\d{8}", re.IGNORECASE)
_OPENALEX = re.compile(r"(?:https?://openalex\.org/)?(W\d+)$", re.IGNORECASE)
_S2 = re.compile(r"^[0-9a-f]{40}$")
_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.IGNORECASE)


def normalize_doi(value: str | None) -> str | None:
    """``https://doi.org/10.1000/ABC.`` -> ``10.1000/abc`` (DOIs are case-insensitive)."""
    if not value:
        return None
    text = _DOI_PREFIXES.sub("", value.strip())
    match = _DOI.search(text)
    if match is None:
        return None
    return match.group(0).rstrip(".,;)]").lower()


def normalize_pmid(value: str | int | None) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    if text.upper().startswith("PMID:"):
        text = text[5:].strip()
    text = text.lstrip("0")
    return text if _PMID.match(text) else None


def normalize_pmcid(value: str | None) -> str | None:
    if not value:
        return None
    match = _PMCID.match(value.strip())
    return f"PMC{match.group(1)}" if match else None


def normalize_arxiv_id(value: str | None) -> str | None:
    """URL prefix and version dropped: ``arxiv.org/abs/1707.08567v1`` -> ``1707.08567``."""
    if not value:
        return None
    text = _ARXIV_PREFIXES.sub("", value.strip())
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        match = pattern.fullmatch(text) or pattern.match(text)
        if match:
            return match.group(1)
    return None


def normalize_nct_id(value: str | None) -> str | None:
    if not value:
        return None
    match = _NCT.search(value)
    return match.group(0).upper() if match else None


def normalize_openalex_id(value: str | None) -> str | None:
    if not value:
        return None
    match = _OPENALEX.search(value.strip())
    return match.group(1).upper() if match else None


def normalize_s2_id(value: str | None) -> str | None:
    if not value:
        return None
    text = value.strip().lower()
    return text if _S2.match(text) else None


def normalize_orcid(value: str | None) -> str | None:
    """``https://orcid.org/0000-0002-3082-3038`` -> ``0000-0002-3082-3038`` (the bare form)."""
    if not value:
        return None
    match = _ORCID.search(value.strip())
    return "-".join(match.groups()).upper() if match else None


_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)


def normalize_title(title: str) -> str:
    """Lower case, punctuation and extra spaces removed: a key for matching titles."""
    return _SPACE.sub(" ", _NON_WORD.sub(" ", title.lower())).strip()
