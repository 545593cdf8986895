"""Merged duplicates in the database: the keys records are matched by, merging a copy into
a record (kept so it can be undone), listing, splitting, and finding duplicates on demand.

A merge keeps every identifier and file of both records and the richest fields
(``papers.dedup.merge_records``); the ``library_merges`` row keeps the absorbed record as it
was and the kept record as it was before its first merge, so a split rebuilds both. A split
merge stays in the table: the pair is never merged again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import LibraryEmbedding, LibraryMatchKey, LibraryMerge, LibraryRecord
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.papers import Record
from scholarstream.papers.dedup import fill_in, merge_records
from scholarstream.sources.library._duplicates import (
    MATCHING_IDS,
    Merge,
    is_identifier_key,
    plan_merges,
    record_match_keys,
    titles_near,
)
from scholarstream.sources.library._labels import copy_labels, move_labels
from scholarstream.sources.library._models import (
    DuplicateCopy,
    DuplicateGroup,
    DuplicateScan,
    LibraryMergeInfo,
    MergedRecord,
    MergePage,
    SplitResult,
)
from scholarstream.sources.library._store import (
    item_of,
    record_data,
    record_of,
    record_of_data,
    set_record,
)

MAX_CANDIDATES_PER_KEY = 200
"""A blocking key shared by more library records than this (a common surname and year) is
too broad to look up; the record's other keys still find its copies. Identifiers are
always looked up."""
_CHUNK = 500
MAX_MERGES_REPORTED = 100


# -- keys ------------------------------------------------------------------------------------


async def add_keys(
    session: AsyncSession, owner_id: uuid.UUID, keys: dict[uuid.UUID, set[str]]
) -> None:
    """Adds the keys each record does not have yet (rows must be flushed)."""
    keys = {record_id: found for record_id, found in keys.items() if found}
    if not keys:
        return
    present: set[tuple[uuid.UUID, str]] = set()
    ids = list(keys)
    for start in range(0, len(ids), _CHUNK):
        result = await session.execute(
            select(LibraryMatchKey.record_id, LibraryMatchKey.key).where(
                LibraryMatchKey.record_id.in_(ids[start : start + _CHUNK])
            )
        )
        present.update((row.record_id, row.key) for row in result)
    values = [
        {"record_id": record_id, "key": key, "owner_id": owner_id}
        for record_id, found in keys.items()
        for key in sorted(found)
        if (record_id, key) not in present
    ]
    if values:
        await session.execute(insert(LibraryMatchKey), values)


def _keys_of(rows: list[tuple[uuid.UUID, dict[str, Any]]]) -> dict[uuid.UUID, set[str]]:
    return {record_id: record_match_keys(record_of_data(data)) for record_id, data in rows}


async def ensure_keys(session: AsyncSession, owner_id: uuid.UUID) -> None:
    """Keys for the owner's records that have none yet (rows from before duplicate
    matching existed): built once, a batch at a time."""
    while True:
        rows = (
            await session.execute(
                select(LibraryRecord.id, LibraryRecord.data)
                .where(LibraryRecord.owner_id == owner_id, LibraryRecord.keyed.is_(False))
                .limit(_CHUNK)
            )
        ).all()
        if not rows:
            return
        keys = await asyncio.to_thread(_keys_of, [(row.id, row.data) for row in rows])
        await add_keys(session, owner_id, keys)
        await session.execute(
            update(LibraryRecord)
            .where(LibraryRecord.id.in_([row.id for row in rows]))
            .values(keyed=True)
        )


async def candidates(
    session: AsyncSession, owner_id: uuid.UUID, keys: Mapping[str, Collection[str]]
) -> list[LibraryRecord]:
    """The library records that may be copies of the new records: those sharing an
    identifier with one, and those sharing another key (too broad keys left out) whose
    title is anywhere near the new record's (``keys``: each key with the normalised titles
    of the new records that have it). Only these are read whole and compared."""
    if not keys:
        return []
    by_key: dict[str, set[uuid.UUID]] = {}
    wanted = sorted(keys)
    for start in range(0, len(wanted), _CHUNK):
        result = await session.execute(
            select(LibraryMatchKey.key, LibraryMatchKey.record_id).where(
                LibraryMatchKey.owner_id == owner_id,
                LibraryMatchKey.key.in_(wanted[start : start + _CHUNK]),
            )
        )
        for row in result:
            by_key.setdefault(row.key, set()).add(row.record_id)
    ids: set[uuid.UUID] = set()
    near: dict[uuid.UUID, set[str]] = {}
    for key, found in by_key.items():
        if is_identifier_key(key):
            ids |= found
        elif len(found) <= MAX_CANDIDATES_PER_KEY:
            for record_id in found:
                near.setdefault(record_id, set()).update(keys[key])
    unsure = [record_id for record_id in near if record_id not in ids]
    for start in range(0, len(unsure), _CHUNK):
        titles = await session.execute(
            select(LibraryRecord.id, LibraryRecord.title).where(
                LibraryRecord.id.in_(unsure[start : start + _CHUNK])
            )
        )
        ids.update(row.id for row in titles if titles_near(row.title, near[row.id]))
    rows: list[LibraryRecord] = []
    ordered = sorted(ids)
    for start in range(0, len(ordered), _CHUNK):
        rows.extend(
            await session.scalars(
                select(LibraryRecord).where(
                    LibraryRecord.owner_id == owner_id,
                    LibraryRecord.id.in_(ordered[start : start + _CHUNK]),
                )
            )
        )
    return sorted(rows, key=lambda row: (row.created_at, row.id))


def alternate_fingerprint(fingerprint: str, data: dict[str, Any]) -> str:
    """The fingerprint of a record whose own one is taken by another work (two editorials
    of one year, say): its whole content makes it unique and stable across re-imports."""
    text = fingerprint + json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


async def stored_copies(
    session: AsyncSession, owner_id: uuid.UUID, fingerprints: Collection[str]
) -> dict[str, list[dict[str, Any]]]:
    """For each fingerprint the library holds, the records stored under it as they were
    imported: a record's current and original data, and every copy merged into a record
    still there (or split from it)."""
    wanted = list(fingerprints)
    found: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(wanted), _CHUNK):
        part = wanted[start : start + _CHUNK]
        rows = (
            await session.execute(
                select(LibraryRecord.id, LibraryRecord.fingerprint, LibraryRecord.data).where(
                    LibraryRecord.owner_id == owner_id, LibraryRecord.fingerprint.in_(part)
                )
            )
        ).all()
        for row in rows:
            found.setdefault(row.fingerprint, []).append(row.data)
        by_id = {row.id: row.fingerprint for row in rows}
        if by_id:
            originals = await session.execute(
                select(LibraryMerge.kept_id, LibraryMerge.kept_original).where(
                    LibraryMerge.owner_id == owner_id, LibraryMerge.kept_id.in_(list(by_id))
                )
            )
            for merge in originals:
                found[by_id[merge.kept_id]].append(merge.kept_original)
        for holder in (LibraryMerge.kept_id, LibraryMerge.absorbed_id):
            merged = await session.execute(
                select(LibraryMerge.absorbed_fingerprint, LibraryMerge.absorbed_data)
                .join(LibraryRecord, LibraryRecord.id == holder)
                .where(
                    LibraryMerge.owner_id == owner_id,
                    LibraryMerge.absorbed_fingerprint.in_(part),
                )
            )
            for merge in merged:
                found.setdefault(merge.absorbed_fingerprint, []).append(merge.absorbed_data)
    return found


async def split_pairs(
    session: AsyncSession, owner_id: uuid.UUID, ids: Collection[uuid.UUID] | None = None
) -> set[frozenset[uuid.UUID]]:
    """Pairs of records a person split apart (among ``ids``, or all of the owner's)."""
    statement = select(LibraryMerge.kept_id, LibraryMerge.absorbed_id).where(
        LibraryMerge.owner_id == owner_id, LibraryMerge.split_at.is_not(None)
    )
    pairs: set[frozenset[uuid.UUID]] = set()
    if ids is None:
        result = await session.execute(statement)
        return {frozenset((row.kept_id, row.absorbed_id)) for row in result}
    wanted = list(ids)
    for start in range(0, len(wanted), _CHUNK):
        part = wanted[start : start + _CHUNK]
        result = await session.execute(
            statement.where(or_(LibraryMerge.kept_id.in_(part), LibraryMerge.absorbed_id.in_(part)))
        )
        pairs.update(frozenset((row.kept_id, row.absorbed_id)) for row in result)
    return pairs


async def merged_copies(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> Counter[str | None]:
    """The copies merged into the records ``ids`` and still merged, counted by the file
    each copy came from (None: none)."""
    found: Counter[str | None] = Counter()
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), _CHUNK):
        result = await session.execute(
            select(LibraryMerge.absorbed_source_file, func.count())
            .where(
                LibraryMerge.owner_id == owner_id,
                LibraryMerge.kept_id.in_(wanted[start : start + _CHUNK]),
                LibraryMerge.split_at.is_(None),
            )
            .group_by(LibraryMerge.absorbed_source_file)
        )
        for source_file, count in result:
            found[source_file] += count
    return found


# -- merging ---------------------------------------------------------------------------------


def _combined(origin: str) -> Callable[[Sequence[Record]], Record]:
    """How a merge of ``origin`` combines the kept record with its copy: a merge by hand
    keeps the record the person chose and fills its gaps; the rules' merges keep the
    richest value of each field (the same work, written more or less fully)."""
    return fill_in if origin == "hand" else merge_records


@dataclass
class Absorbed:
    """A record about to be merged into another: new from a file, or a library row."""

    id: uuid.UUID
    record: Record
    fingerprint: str
    source_file: str | None
    added_at: datetime


@dataclass
class Merger:
    """Merges copies into records within one session, remembering each kept record's
    state before its first merge."""

    session: AsyncSession
    owner_id: uuid.UUID
    originals: dict[uuid.UUID, tuple[dict[str, Any], list[str]]] = field(default_factory=dict)
    made: list[LibraryMerge] = field(default_factory=list)
    changed: dict[uuid.UUID, set[str]] = field(default_factory=dict)

    async def load_originals(self, kept_ids: Iterable[uuid.UUID]) -> None:
        wanted = [i for i in set(kept_ids) if i not in self.originals]
        for start in range(0, len(wanted), _CHUNK):
            result = await self.session.execute(
                select(
                    LibraryMerge.kept_id,
                    LibraryMerge.kept_original,
                    LibraryMerge.kept_files_original,
                ).where(
                    LibraryMerge.owner_id == self.owner_id,
                    LibraryMerge.kept_id.in_(wanted[start : start + _CHUNK]),
                )
            )
            for row in result:
                self.originals.setdefault(
                    row.kept_id, (row.kept_original, list(row.kept_files_original))
                )

    def absorb(
        self, kept: LibraryRecord, copy: Absorbed, *, origin: str, evidence: str
    ) -> LibraryMerge:
        """Merges ``copy`` into ``kept`` (call ``load_originals`` for ``kept`` first)."""
        original, files = self.originals.setdefault(
            kept.id, (dict(kept.data), list(kept.merged_files or []))
        )
        merge = LibraryMerge(
            id=uuid.uuid4(),
            owner_id=self.owner_id,
            kept_id=kept.id,
            absorbed_id=copy.id,
            absorbed_fingerprint=copy.fingerprint,
            absorbed_data=record_data(copy.record),
            absorbed_source_file=copy.source_file,
            absorbed_added_at=copy.added_at,
            kept_original=original,
            kept_files_original=files,
            origin=origin,
            evidence=evidence[:500],
            created_at=utcnow(),
        )
        self.session.add(merge)
        self.made.append(merge)
        set_record(kept, _combined(origin)([record_of(kept), copy.record]))
        kept.merged_files = _with_file(kept.merged_files, kept.source_file, copy.source_file)
        kept.updated_at = utcnow()
        self.changed.setdefault(kept.id, set()).update(
            record_match_keys(record_of(kept)) | record_match_keys(copy.record)
        )
        return merge

    async def finish(self) -> None:
        """Keys for the changed records; their vectors are rebuilt (the text changed)."""
        await self.session.flush()
        await add_keys(self.session, self.owner_id, self.changed)
        changed = list(self.changed)
        for start in range(0, len(changed), _CHUNK):
            await self.session.execute(
                delete(LibraryEmbedding).where(
                    LibraryEmbedding.record_id.in_(changed[start : start + _CHUNK])
                )
            )
        self.changed.clear()


def _with_file(files: list[str] | None, own: str | None, new: str | None) -> list[str]:
    current = list(files or [])
    if new and new != own and new not in current:
        current.append(new)
    return current


# -- reading and splitting ---------------------------------------------------------------------


def _side(record_id: uuid.UUID, data: dict[str, Any], source_file: str | None) -> MergedRecord:
    ids = data.get("ids") or {}
    return MergedRecord(
        id=record_id,
        title=str(data.get("title") or ""),
        year=data.get("year"),
        identifiers={name: str(ids[name]) for name in MATCHING_IDS if ids.get(name)},
        source_file=source_file,
    )


def merge_info(merge: LibraryMerge, kept: LibraryRecord) -> LibraryMergeInfo:
    return LibraryMergeInfo(
        id=merge.id,
        merged_at=merge.created_at,
        origin=merge.origin,
        evidence=merge.evidence,
        # What the kept record had of its own: the two sides show what each brought.
        kept=_side(kept.id, merge.kept_original, kept.source_file),
        absorbed=_side(merge.absorbed_id, merge.absorbed_data, merge.absorbed_source_file),
        split_at=merge.split_at,
    )


async def list_merges(
    session: AsyncSession, owner_id: uuid.UUID, *, offset: int, limit: int
) -> MergePage:
    """Merges in force whose kept record is in the library, newest first."""
    where = and_(LibraryMerge.owner_id == owner_id, LibraryMerge.split_at.is_(None))
    joined = select(LibraryMerge, LibraryRecord).join(
        LibraryRecord, LibraryRecord.id == LibraryMerge.kept_id
    )
    total = await session.scalar(
        select(func.count())
        .select_from(LibraryMerge)
        .join(LibraryRecord, LibraryRecord.id == LibraryMerge.kept_id)
        .where(where)
    )
    result = await session.execute(
        joined.where(where)
        .order_by(LibraryMerge.created_at.desc(), LibraryMerge.id)
        .offset(offset)
        .limit(limit)
    )
    items = [merge_info(merge, kept) for merge, kept in result]
    return MergePage(total=total or 0, offset=offset, limit=limit, items=items)


async def split(scope: OwnerScope, merge_id: uuid.UUID) -> SplitResult:
    """The absorbed record restored as its own record, the kept one rebuilt from its
    original and the merges still in force; the pair is remembered as split."""
    session = scope.session
    merge = await scope.get(LibraryMerge, merge_id, what="Merge")
    if merge.split_at is not None:
        raise ConflictError(
            "This merge was already split: both records are in your library.",
            hint="List the merges in force with scholarstream library merges.",
        )
    kept = await session.get(LibraryRecord, merge.kept_id)
    if kept is None or kept.owner_id != scope.owner_id:
        raise NotFoundError(
            "The record this copy was merged into is no longer in your library (deleted, "
            "or itself merged into another record).",
            hint="If it was merged into another record, split that merge first.",
        )
    if await session.get(LibraryRecord, merge.absorbed_id) is not None:
        raise ConflictError("The merged copy is already a record of its own again.")
    now = utcnow()
    merge.split_at = now
    others = list(
        await session.scalars(
            select(LibraryMerge)
            .where(
                LibraryMerge.owner_id == scope.owner_id,
                LibraryMerge.kept_id == kept.id,
                LibraryMerge.split_at.is_(None),
                LibraryMerge.id != merge.id,
            )
            .order_by(LibraryMerge.created_at, LibraryMerge.id)
        )
    )
    copies = [record_of_data(other.absorbed_data) for other in others]
    rebuilt = record_of_data(merge.kept_original)
    for other, copy in zip(others, copies, strict=True):
        rebuilt = _combined(other.origin)([rebuilt, copy])
    set_record(kept, rebuilt)
    files = list(merge.kept_files_original)
    for other in others:
        files = _with_file(files, kept.source_file, other.absorbed_source_file)
    kept.merged_files = files
    kept.updated_at = now

    restored_record = record_of_data(merge.absorbed_data)
    into_restored = list(
        await session.scalars(
            select(LibraryMerge.absorbed_source_file).where(
                LibraryMerge.owner_id == scope.owner_id,
                LibraryMerge.kept_id == merge.absorbed_id,
                LibraryMerge.split_at.is_(None),
            )
        )
    )
    fingerprint = merge.absorbed_fingerprint
    taken = await session.scalar(
        select(func.count())
        .select_from(LibraryRecord)
        .where(LibraryRecord.owner_id == scope.owner_id, LibraryRecord.fingerprint == fingerprint)
    )
    if taken:
        fingerprint = alternate_fingerprint(fingerprint, merge.absorbed_data)
    restored = LibraryRecord(
        id=merge.absorbed_id,
        owner_id=scope.owner_id,
        fingerprint=fingerprint,
        source_file=merge.absorbed_source_file,
        created_at=merge.absorbed_added_at,
        keyed=True,
    )
    set_record(restored, restored_record)
    for name in into_restored:
        restored.merged_files = _with_file(restored.merged_files, restored.source_file, name)
    session.add(restored)
    await session.execute(delete(LibraryMatchKey).where(LibraryMatchKey.record_id == kept.id))
    await session.execute(delete(LibraryEmbedding).where(LibraryEmbedding.record_id == kept.id))
    await session.flush()
    # Whatever collections and tags the merged record had, each part keeps.
    await copy_labels(session, scope.owner_id, kept.id, restored.id, notes=False)
    kept_keys = record_match_keys(rebuilt).union(*(record_match_keys(c) for c in copies))
    await add_keys(
        session,
        scope.owner_id,
        {kept.id: kept_keys, restored.id: record_match_keys(restored_record)},
    )
    return SplitResult(
        merge=merge_info(merge, kept), restored=item_of(restored), kept=item_of(kept)
    )


# -- finding duplicates on demand --------------------------------------------------------------


async def find_duplicates(
    session: AsyncSession, owner_id: uuid.UUID, *, dry_run: bool = False
) -> DuplicateScan:
    """Every record compared with the others through the deduplicator's blocking; each
    work found more than once is merged into its oldest record (``dry_run``: only listed,
    with the evidence, nothing merged). Records are read as plain columns (no ORM objects
    but for the records involved)."""
    await ensure_keys(session, owner_id)
    ids: list[uuid.UUID] = []
    records: list[Record] = []
    result = await session.stream(
        select(LibraryRecord.id, LibraryRecord.data)
        .where(LibraryRecord.owner_id == owner_id)
        .order_by(LibraryRecord.created_at, LibraryRecord.id)
    )
    async for partition in result.partitions(_CHUNK):
        for found in partition:
            ids.append(found.id)
            records.append(record_of_data(found.data))
    split = await split_pairs(session, owner_id)
    position = {record_id: index for index, record_id in enumerate(ids)}
    apart_pairs = {
        frozenset(position[i] for i in pair) for pair in split if all(i in position for i in pair)
    }

    def apart(i: int, j: int) -> bool:
        return frozenset((i, j)) in apart_pairs

    plan = (await asyncio.to_thread(lambda: plan_merges(records, apart=apart))).merges
    involved = sorted({ids[m.kept] for m in plan} | {ids[m.absorbed] for m in plan})
    rows: dict[uuid.UUID, LibraryRecord] = {}
    for start in range(0, len(involved), _CHUNK):
        rows.update(
            (row.id, row)
            for row in await session.scalars(
                select(LibraryRecord).where(LibraryRecord.id.in_(involved[start : start + _CHUNK]))
            )
        )
    groups = len({m.kept for m in plan})
    if dry_run:
        return DuplicateScan(
            checked=len(ids),
            groups=groups,
            merged=0,
            dry_run=True,
            candidates=_groups(plan, ids, rows),
        )
    pairs = [
        _Pair(rows[ids[m.kept]], rows[ids[m.absorbed]], records[m.absorbed], m.evidence)
        for m in plan
    ]
    made = await _absorb_rows(session, owner_id, pairs, origin="scan")
    return DuplicateScan(
        checked=len(ids),
        groups=groups,
        merged=len(plan),
        merges=[merge_info(merge, rows[merge.kept_id]) for merge in made[:MAX_MERGES_REPORTED]],
    )


@dataclass(frozen=True)
class _Pair:
    """A library record to merge into another: ``record`` is the copy's content."""

    kept: LibraryRecord
    copy: LibraryRecord
    record: Record
    evidence: str


async def _absorb_rows(
    session: AsyncSession, owner_id: uuid.UUID, pairs: Sequence[_Pair], *, origin: str
) -> list[LibraryMerge]:
    """Merges each pair's copy into its kept record and deletes the copy's row (its
    collections, tags and note go to the kept record); the merges made."""
    merger = Merger(session, owner_id)
    await merger.load_originals(pair.kept.id for pair in pairs)
    for pair in pairs:
        copy = Absorbed(
            id=pair.copy.id,
            record=pair.record,
            fingerprint=pair.copy.fingerprint,
            source_file=pair.copy.source_file,
            added_at=pair.copy.created_at,
        )
        merger.absorb(pair.kept, copy, origin=origin, evidence=pair.evidence)
    await move_labels(session, owner_id, [(pair.copy.id, pair.kept.id) for pair in pairs])
    absorbed_ids = [pair.copy.id for pair in pairs]
    for start in range(0, len(absorbed_ids), _CHUNK):
        part = absorbed_ids[start : start + _CHUNK]
        await session.execute(delete(LibraryMatchKey).where(LibraryMatchKey.record_id.in_(part)))
        await session.execute(delete(LibraryEmbedding).where(LibraryEmbedding.record_id.in_(part)))
    for pair in pairs:
        merger.changed.pop(pair.copy.id, None)
        await session.delete(pair.copy)
    await merger.finish()
    return merger.made


MAX_MERGED_BY_HAND = 50
"""Copies one merge by hand may name: a person compares them first."""


def _not_found(kept: bool, lost: int, copies: int) -> str:
    """Which of the records a merge names are missing: "The record to keep is not", "2 of
    the 3 copies are not", "The record to keep and the copy are not"."""
    parts = ["the record to keep"] if kept else []
    if lost:
        parts.append("the copy" if copies == 1 else f"{lost} of the {copies} copies")
    verb = "is" if len(parts) == 1 and (copies == 1 or lost == 1 or not lost) else "are"
    said = " and ".join(parts)
    return f"{said[0].upper()}{said[1:]} {verb} not"


async def merge_by_hand(
    scope: OwnerScope, kept_id: uuid.UUID, copy_ids: Sequence[uuid.UUID]
) -> list[LibraryMergeInfo]:
    """Merges the records ``copy_ids`` into ``kept_id``: the kept record's fields stay and
    the copies fill its gaps (``fill_in``); each merge listed and splittable. For the
    pairs the rules leave apart (a venue written two ways, a missing year)."""
    copies = list(dict.fromkeys(copy_ids))
    if not copies:
        raise InvalidInputError(
            "No copy named.", hint="Name the records to merge into the one you keep."
        )
    if kept_id in copies:
        raise InvalidInputError(
            "The record you keep is among its copies: a record cannot be merged into itself.",
            hint="Name the record you keep once, and the copies apart from it.",
        )
    if len(copies) > MAX_MERGED_BY_HAND:
        raise InvalidInputError(
            f"{len(copies)} copies named; one merge takes at most {MAX_MERGED_BY_HAND}.",
            hint="Merge them in parts, or let find duplicates merge the clear copies.",
        )
    wanted = [kept_id, *copies]
    rows = {
        row.id: row
        for row in await scope.session.scalars(
            scope.select(LibraryRecord).where(LibraryRecord.id.in_(wanted))
        )
    }
    lost = [copy for copy in copies if copy not in rows]
    if kept_id not in rows or lost:
        raise NotFoundError(
            f"{_not_found(kept_id not in rows, len(lost), len(copies))} in your library "
            "(deleted, merged into another record, or someone else's): nothing was merged.",
            hint="Search the library again and name the records it lists.",
        )
    kept = rows[kept_id]
    pairs = [_Pair(kept, rows[copy], record_of(rows[copy]), "merged by hand") for copy in copies]
    made = await _absorb_rows(scope.session, scope.owner_id, pairs, origin="hand")
    return [merge_info(merge, kept) for merge in made]


def _groups(
    plan: Sequence[Merge], ids: Sequence[uuid.UUID], rows: Mapping[uuid.UUID, LibraryRecord]
) -> list[DuplicateGroup]:
    """The first groups of ``plan``: each work's oldest record and its copies, with what
    matched each one."""
    by_kept: dict[int, list[Merge]] = {}
    for merge in plan:
        by_kept.setdefault(merge.kept, []).append(merge)
    groups: list[DuplicateGroup] = []
    for kept, merges in list(by_kept.items())[:MAX_MERGES_REPORTED]:
        row = rows[ids[kept]]
        groups.append(
            DuplicateGroup(
                kept=_side(row.id, row.data, row.source_file),
                copies=[
                    DuplicateCopy(
                        record=_side(
                            ids[m.absorbed],
                            rows[ids[m.absorbed]].data,
                            rows[ids[m.absorbed]].source_file,
                        ),
                        evidence=m.evidence,
                    )
                    for m in merges
                ],
            )
        )
    return groups
