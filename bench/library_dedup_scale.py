"""Duplicates on import at library scale: a library of L records (default 50,000) imports a
file of N more (default 5,000), and every copy of a work already in the library must be
merged into it without comparing the file with the whole library.

Records come from ``bench/dedup_scale.py``'s generator (real seed works, synthetic works,
1-5 corrupted copies each; seeded), shuffled, the first L imported as the library and the
next N as the new file. Reported: seconds for each import, records/s, the library records
each batch loaded because they share a key with it (summed over batches), the pairs the
deduplicator compared (against L x N for comparing every pair), and the merges
against the generator's truth (a false merge joins two works; a missed one leaves a copy
as a new record), and the process's peak RSS.

    python bench/library_dedup_scale.py [--library 50000] [--new 5000] [--seed 7]
        [--database-url postgresql+asyncpg://...]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import select

from dedup_scale import generate
from scholarstream.accounts import create_user
from scholarstream.db import Database, upgrade_async
from scholarstream.db.tables import LibraryMerge, LibraryRecord
from scholarstream.papers import Record
from scholarstream.settings import load_settings
from scholarstream.sources.library import ImportReport, import_items


class _Work(logging.Handler):
    """Sums what the importer logs per batch: library records sharing a key, pairs compared."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.candidates = 0
        self.compared = 0

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args
        if isinstance(args, tuple) and len(args) == 4:
            self.candidates += int(args[2])  # type: ignore[call-overload]
            self.compared += int(args[3])  # type: ignore[call-overload]


async def _import(
    database: Database, owner: uuid.UUID, records: list[Record], name: str
) -> tuple[ImportReport, float, _Work]:
    work = _Work()
    logger = logging.getLogger("scholarstream.sources.library._importer")
    logger.addHandler(work)
    logger.setLevel(logging.DEBUG)
    started = time.perf_counter()
    try:
        report = await import_items(
            database, owner, iter(records), file=name, format_name="records"
        )
    finally:
        logger.removeHandler(work)
    return report, time.perf_counter() - started, work


async def run(library_size: int, new_size: int, seed: int, database_url: str | None) -> None:
    records, truth = generate(library_size + new_size, seed)
    work_of = {record.record_id: work for record, work in zip(records, truth, strict=True)}
    library, incoming = records[:library_size], records[library_size:]
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=database_url)
        await upgrade_async(settings.app_database_url)
        database = Database(settings.app_database_url)
        async with database.session() as session:
            owner = (await create_user(session, f"bench-{uuid.uuid4().hex[:8]}", "bench-pw-123")).id
        first, first_seconds, first_work = await _import(database, owner, library, "library.ris")
        second, second_seconds, second_work = await _import(database, owner, incoming, "new.ris")
        async with database.session() as session:
            kept_ids = {
                row.id: row.record_id
                for row in (
                    await session.execute(
                        select(LibraryRecord.id, LibraryRecord.record_id).where(
                            LibraryRecord.owner_id == owner
                        )
                    )
                )
            }
            merges = (
                await session.execute(
                    select(LibraryMerge.kept_id, LibraryMerge.absorbed_data).where(
                        LibraryMerge.owner_id == owner
                    )
                )
            ).all()
        await database.dispose()
    false_merges = sum(
        1
        for merge in merges
        if work_of.get(kept_ids.get(merge.kept_id)) != work_of[merge.absorbed_data["record_id"]]
    )
    in_library = {work_of[r.record_id] for r in library}
    expected_new = len({work_of[r.record_id] for r in incoming} - in_library)
    print(
        f"{'import':10} {'records':>8} {'seconds':>8} {'rec/s':>7} {'added':>7} "
        f"{'merged':>7} {'in file':>7} {'exact':>6} {'candidates':>11} {'pairs compared':>15}"
    )
    for name, size, report, seconds, work in (
        ("library", library_size, first, first_seconds, first_work),
        ("new file", new_size, second, second_seconds, second_work),
    ):
        print(
            f"{name:10} {size:8d} {seconds:8.1f} {size / seconds:7.0f} {report.imported:7d} "
            f"{report.merged:7d} {report.in_file_duplicates:7d} {report.already_present:6d} "
            f"{work.candidates:11,d} {work.compared:15,d}"
        )
    print(
        f"new file: {expected_new} works not in the library (added: {second.imported}); "
        f"false merges over both imports: {false_merges} of {len(merges)}"
    )
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"peak RSS of the process: {peak_kib / 1024:,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=int, default=50_000)
    parser.add_argument("--new", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--database-url", help="a PostgreSQL URL; SQLite in a temporary dir if omitted"
    )
    args = parser.parse_args()
    asyncio.run(run(args.library, args.new, args.seed, args.database_url))


if __name__ == "__main__":
    main()
