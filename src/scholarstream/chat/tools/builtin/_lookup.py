"""Finding records by identifier: a library record's UUID, an NCT id, a DOI, an arXiv id or
a PMID, each fetched from the sources that know it, in order (a DOI from OpenAlex, which
has abstracts, then from Crossref)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from scholarstream.chat.tools._registry import ToolContext
from scholarstream.errors import ScholarStreamError
from scholarstream.papers import (
    Record,
    normalize_arxiv_id,
    normalize_doi,
    normalize_nct_id,
    normalize_pmid,
)

FetchById = Callable[[ToolContext, list[str]], Awaitable[dict[str, Record]]]
"""Records for normalised ids, keyed by the id; ids it does not know are left out."""


@dataclass(frozen=True)
class Fetcher:
    source: str
    fetch: FetchById


@dataclass(frozen=True)
class IdentifierKind:
    name: str
    label: str
    normalize: Callable[[str], str | None]
    fetchers: tuple[Fetcher, ...]


def _from_source(source: str, id_field: str) -> Fetcher:
    async def fetch(ctx: ToolContext, ids: list[str]) -> dict[str, Record]:
        records = await ctx.services.sources.get(source).fetch(ids)
        return {key: r for r in records if (key := getattr(r.ids, id_field)) is not None}

    return Fetcher(source=source, fetch=fetch)


async def _fetch_library(ctx: ToolContext, ids: list[str]) -> dict[str, Record]:
    items = await ctx.services.library.get_many(ctx.owner_id, [uuid.UUID(i) for i in ids])
    return {str(item.id): item.record for item in items}


def _uuid(text: str) -> str | None:
    try:
        return str(uuid.UUID(text.strip()))
    except ValueError:
        return None


def _whole(
    normalize: Callable[[str], str | None], prefixes: tuple[str, ...] = ()
) -> Callable[[str], str | None]:
    """``normalize`` applied only to a string that is nothing but the identifier (after an
    optional prefix such as ``doi:``), so prose that mentions one is not taken for it."""

    def strict(text: str) -> str | None:
        text = text.strip()
        if " " in text and not text.lower().startswith(prefixes):
            return None
        return normalize(text)

    return strict


_KINDS: dict[str, IdentifierKind] = {}


def register_identifier_kind(kind: IdentifierKind) -> IdentifierKind:
    """Kinds are tried in registration order: the first whose normaliser accepts a string
    names it."""
    if kind.name in _KINDS:
        raise ValueError(f"identifier kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind
    return kind


LIBRARY = register_identifier_kind(
    IdentifierKind("library", "library record id", _uuid, (Fetcher("library", _fetch_library),))
)
NCT = register_identifier_kind(
    IdentifierKind(
        "nct",
        "NCT id",
        _whole(normalize_nct_id),
        (_from_source("clinicaltrials", "nct_id"),),
    )
)
DOI = register_identifier_kind(
    IdentifierKind(
        "doi",
        "DOI",
        _whole(normalize_doi, ("doi:",)),
        (_from_source("openalex", "doi"), _from_source("crossref", "doi")),
    )
)
ARXIV = register_identifier_kind(
    IdentifierKind(
        "arxiv",
        "arXiv id",
        _whole(normalize_arxiv_id, ("arxiv:",)),
        (_from_source("arxiv", "arxiv_id"),),
    )
)
PMID = register_identifier_kind(
    IdentifierKind(
        "pmid", "PMID", _whole(normalize_pmid, ("pmid:",)), (_from_source("pubmed", "pmid"),)
    )
)

ACCEPTED = (
    "a PMID (12345678), a DOI (10.1000/xyz), an arXiv id (2104.12255), an NCT id "
    "(NCT01234567) or the id of a record in your library"
)


def classify(identifier: str, kinds: Sequence[str] | None = None) -> tuple[IdentifierKind, str]:
    """The kind of ``identifier`` and its normalised form; ``KeyError`` when it is none of
    ``kinds`` (default: every kind)."""
    for kind in _KINDS.values():
        if kinds is not None and kind.name not in kinds:
            continue
        normalized = kind.normalize(identifier)
        if normalized:
            return kind, normalized
    raise KeyError(identifier)


@dataclass(frozen=True)
class Found:
    source: str
    record: Record
    library_id: str | None


@dataclass
class Lookup:
    """What became of each identifier, keyed as it was given."""

    found: dict[str, Found] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    """Recognised, but no source has it: identifier -> the sources asked."""
    unrecognised: list[str] = field(default_factory=list)
    failed: dict[str, ScholarStreamError] = field(default_factory=dict)
    """Not found because a source failed: identifier -> the last error."""


async def lookup(
    ctx: ToolContext, identifiers: Sequence[str], kinds: Sequence[str] | None = None
) -> Lookup:
    """Each identifier from the first source of its kind that has it; a failing source
    is passed over for the next one and reported only when none had the record."""
    result = Lookup()
    wanted: dict[str, dict[str, list[str]]] = {}
    for identifier in dict.fromkeys(identifiers):
        try:
            kind, normalized = classify(identifier, kinds)
        except KeyError:
            result.unrecognised.append(identifier)
            continue
        wanted.setdefault(kind.name, {}).setdefault(normalized, []).append(identifier)
    for name, by_id in wanted.items():
        kind = _KINDS[name]
        remaining = list(by_id)
        errors: dict[str, ScholarStreamError] = {}
        for fetcher in kind.fetchers:
            if not remaining:
                break
            try:
                got = await fetcher.fetch(ctx, remaining)
            except ScholarStreamError as exc:
                errors.update(dict.fromkeys(remaining, exc))
                continue
            for normalized in remaining:
                # A source that answered outranks an earlier one that failed.
                errors.pop(normalized, None)
                if normalized in got:
                    library_id = normalized if kind is LIBRARY else None
                    found = Found(fetcher.source, got[normalized], library_id)
                    result.found.update(dict.fromkeys(by_id[normalized], found))
            remaining = [n for n in remaining if n not in got]
        asked = ", ".join(f.source for f in kind.fetchers)
        for normalized in remaining:
            for identifier in by_id[normalized]:
                if normalized in errors:
                    result.failed[identifier] = errors[normalized]
                else:
                    result.missing[identifier] = asked
    return result
