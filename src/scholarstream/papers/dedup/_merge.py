"""One record from the copies of a work: nothing any copy knew is lost.

Every identifier of every copy and the provenance of all copies are kept (so the merged
record is found again by any of its ids and shows every source that returned it); for the
other fields the richest value wins: the longest abstract, the longest author list, the
full journal name over its abbreviation, a page range over a first page. Lists (keywords,
MeSH terms, links) are united. Each field's rule is registered in ``MERGERS``; a field
without one takes the first copy's value that is not empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from scholarstream.papers import Author, Identifiers, Paper, Record, Trial
from scholarstream.papers.dedup._normalize import page_keys, strip_notes, volume_key

Merger = Callable[[list[Any]], Any]


def _present(values: list[Any]) -> list[Any]:
    return [v for v in values if v is not None and v != "" and v != []]


def first(values: list[Any]) -> Any:
    present = _present(values)
    return present[0] if present else values[0]


def longest(values: list[Any]) -> Any:
    present = _present(values)
    return max(present, key=len) if present else values[0]


def either(values: list[bool]) -> bool:
    return any(values)


def largest(values: list[Any]) -> Any:
    present = _present(values)
    return max(present) if present else values[0]


def _key(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    return value


def united(values: list[list[Any]]) -> list[Any]:
    """Every item of every list once (first spelling kept), in order of appearance."""
    seen: dict[object, Any] = {}
    for items in values:
        for item in items:
            seen.setdefault(_key(item), item)
    return list(seen.values())


def identifiers(values: list[Identifiers]) -> Identifiers:
    return Identifiers(
        **{name: first([getattr(ids, name) for ids in values]) for name in Identifiers.model_fields}
    )


def title(values: list[str]) -> str:
    """The fullest title (subtitle kept), judged without appended notes ("[Review]")."""
    return max(values, key=lambda text: (len(strip_notes(text)), -len(text)))


def authors(values: list[list[Author]]) -> list[Author]:
    """The longest list; among equals the one with the fullest names ("Kang, Si Hyun" over
    "Kang, S. H.")."""
    return max(values, key=lambda people: (len(people), sum(len(p.name) for p in people)))


def volume(values: list[str | None]) -> str | None:
    """The first volume that is a number ("1)" and "NA" are not)."""
    usable = [v for v in values if v and volume_key(v)]
    return usable[0] if usable else next((v for v in values if v), None)


def pages(values: list[str | None]) -> str | None:
    """A full range ("288-297") over a short one ("288-97") or a first page."""
    usable = [v for v in values if v and page_keys(v)[0]]
    if not usable:
        return next((v for v in values if v), None)
    return max(usable, key=lambda v: (page_keys(v)[1] is not None, len(v)))


def issns(values: list[str | None]) -> str | None:
    found = united([[part.strip() for part in v.split(";")] for v in _present(values)])
    return "; ".join(found) or None


MERGERS: dict[str, Merger] = {
    "record_id": first,
    "ids": identifiers,
    "title": title,
    "official_title": longest,
    "abstract": longest,
    "summary": longest,
    "authors": authors,
    "venue": longest,
    "volume": volume,
    "pages": pages,
    "issn": issns,
    "publication_types": united,
    "mesh_terms": united,
    "keywords": united,
    "links": united,
    "conditions": united,
    "collaborators": united,
    "interventions": united,
    "primary_outcomes": united,
    "phases": united,
    "citation_count": largest,
    "has_results": either,
    "provenance": united,
}


def merge_records(records: Sequence[Record]) -> Record:
    """The copies merged into one record of their kind (the first copy's id is kept)."""
    if not records:
        raise ValueError("nothing to merge")
    if len(records) == 1:
        return records[0]
    kind: type[Paper] | type[Trial] = type(records[0])
    if any(type(record) is not kind for record in records):
        raise ValueError("a paper and a trial registration are never one work")
    values = {
        name: MERGERS.get(name, first)([getattr(record, name) for record in records])
        for name in kind.model_fields
        if name != "kind"
    }
    return kind.model_validate(values)


def fill_in(records: Sequence[Record]) -> Record:
    """The first record with only its gaps filled from the others: what a person who
    chose the record to keep expects (its title, authors, identifiers and types stay; an
    empty field takes another copy's value, keywords, links and provenance are united)."""
    kind = type(records[0])
    if any(type(record) is not kind for record in records):
        raise ValueError("a paper and a trial registration are never one work")
    values = {
        name: (KEEPS_UNITED.get(name, first))([getattr(record, name) for record in records])
        for name in kind.model_fields
        if name != "kind"
    }
    return kind.model_validate(values)


KEEPS_UNITED: dict[str, Merger] = {
    name: merger
    for name, merger in MERGERS.items()
    if merger in (united, either, issns) and name != "publication_types"
}
"""The fields ``fill_in`` unites rather than taking the first record's: lists that add
what each copy knew (a second publication type would misname the work kept)."""
