"""Deduplication at scale: N generated records (default 100,000) with known duplicates.

Recipe (seeded, so every run builds the same records):

1. Seeds: every labelled set under ../shared/data/dedup is read through the product's CSV
   import; one record per true cluster is a *seed work* (about 2,650 real, distinct works:
   stroke, cytology screening, ASySD diabetes, special cases).
2. Works: the seeds first, then synthetic works until the records are N. A synthetic work
   recombines real material: the first part of one seed's title with the rest of
   another's, one word swapped for a word from another title; 1-8 authors whose family
   and given names come from different real authors; a real venue; a random year
   (1990-2023), volume, issue and page range; a unique DOI on 60% of them. Titles are
   unique (folded), so synthetic works are distinct from one another by construction
   (near-identical ones can still occur and count against precision, as in real data).
3. Copies: each work gets 1 record (62%), 2 (24%), 3 (9%), 4 (3%) or 5 (2%). The first is
   the work as it is; the others are corrupted the way databases differ: title case
   changed (30%), punctuation changed (20%), a typo in a long word (15%), a translation
   note "[German]" etc. or bracketed title (5%), "[Review]" appended (5%); authors as
   initials "Smith, J. A." or "Smith JA" (50%), cut to three (10%), dropped (5%); venue
   abbreviated (30%: words cut to 4-6 letters, "of"/"the" dropped), "&" for "and" (10%),
   dropped (10%); DOI dropped (40%); page range shortened "288-97" (30%) or dropped (10%);
   volume dropped (5%); year one off (4%); abstract dropped (50%).
4. All records are shuffled (so copies are not neighbours) and ``find_clusters`` runs on
   them. Reported: records, seconds, peak RSS of the process, and precision/recall
   (per-record convention of bench/dedup.py, and pairwise) against the generator's truth.

    python bench/dedup_scale.py [--records 100000] [--seed 7] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from dedup import DATA, read_set, score
from scholarstream.papers import Author, Identifiers, Paper, Provenance, Record, normalize_title
from scholarstream.papers.dedup import find_clusters

COPIES = ((1, 0.62), (2, 0.24), (3, 0.09), (4, 0.03), (5, 0.02))
TRANSLATIONS = ("German", "French", "Chinese", "Spanish", "Russian", "Japanese", "Italian")
STOP_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "de", "la"})


@dataclass
class ScaleResult:
    records: int
    works: int
    true_duplicates: int
    found: int
    false_positives: int
    seconds: float
    records_per_second: float
    peak_rss_before_mib: float
    peak_rss_mib: float
    precision: float
    recall: float
    pair_precision: float
    pair_recall: float


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def seed_works() -> list[Paper]:
    """One record per true cluster of every labelled set."""
    works: list[Paper] = []
    for directory in sorted(p for p in DATA.iterdir() if p.is_dir()):
        records, truth, _ = read_set(directory)
        seen: set[int] = set()
        for record, label in zip(records, truth, strict=True):
            if label not in seen and isinstance(record, Paper):
                seen.add(label)
                works.append(record)
    return works


class Generator:
    def __init__(self, seeds: Sequence[Paper], rng: random.Random) -> None:
        self.rng = rng
        self.seeds = list(seeds)
        self.titles = [s.title.rstrip(".").split() for s in seeds if len(s.title.split()) >= 4]
        self.words = sorted({w for t in self.titles for w in t if w.isalpha() and len(w) > 4})
        self.families = sorted({a.family for s in seeds for a in s.authors if a.family})
        self.givens = sorted({a.given for s in seeds for a in s.authors if a.given})
        self.venues = sorted({s.venue for s in seeds if s.venue})
        self.seen_titles = {normalize_title(s.title) for s in seeds}
        self.serial = 0

    def synthetic_work(self) -> Paper:
        rng = self.rng
        while True:
            first, second = rng.choice(self.titles), rng.choice(self.titles)
            words = first[: max(2, len(first) // 2)] + second[len(second) // 2 :]
            words[rng.randrange(len(words))] = rng.choice(self.words)
            title = " ".join(words)
            key = normalize_title(title)
            if key not in self.seen_titles:
                self.seen_titles.add(key)
                break
        self.serial += 1
        start = rng.randint(1, 3000)
        authors = [
            Author.from_parts(rng.choice(self.families), rng.choice(self.givens))
            for _ in range(rng.randint(1, 8))
        ]
        return Paper(
            title=title,
            authors=[a for a in authors if a is not None],
            venue=rng.choice(self.venues),
            year=rng.randint(1990, 2023),
            volume=str(rng.randint(1, 200)),
            issue=str(rng.randint(1, 12)),
            pages=f"{start}-{start + rng.randint(2, 14)}",
            ids=Identifiers(
                doi=f"10.{rng.randint(1000, 9999)}/synthetic.{self.serial}"
                if rng.random() < 0.6
                else None
            ),
        )

    def copies(self) -> int:
        roll, total = self.rng.random(), 0.0
        for count, share in COPIES:
            total += share
            if roll < total:
                return count
        return 1

    # -- corruptions -----------------------------------------------------------------

    def title(self, title: str) -> str:
        rng = self.rng
        if rng.random() < 0.30:
            title = title.lower() if rng.random() < 0.5 else title.title()
        if rng.random() < 0.20:
            title = title.replace(": ", " - ") if ": " in title else title.replace("-", " ")
        if rng.random() < 0.15:
            words = title.split()
            long_words = [i for i, w in enumerate(words) if len(w) > 5 and w.isalpha()]
            if long_words:
                i = rng.choice(long_words)
                word, at = words[i], rng.randrange(1, len(words[i]) - 2)
                words[i] = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
                title = " ".join(words)
        roll = rng.random()
        if roll < 0.05:
            title = f"{title}. [{rng.choice(TRANSLATIONS)}]" if rng.random() < 0.5 else f"[{title}]"
        elif roll < 0.10:
            title = f"{title}. [Review]"
        return title

    def authors(self, authors: list[Author]) -> list[Author]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.05:
            return []
        if roll < 0.15:
            authors = authors[:3]
        if rng.random() < 0.5:
            vancouver = rng.random() < 0.5
            changed = []
            for author in authors:
                initials = "".join(p[0] for p in re.split(r"[\s.\-]+", author.given or "") if p)
                if not author.family or not initials:
                    changed.append(author)
                    continue
                dotted = " ".join(f"{i}." for i in initials)
                name = f"{author.family} {initials}" if vancouver else f"{author.family}, {dotted}"
                changed.append(Author(name=name, family=author.family, given=dotted))
            authors = changed
        return authors

    def venue(self, venue: str | None) -> str | None:
        rng = self.rng
        if venue is None:
            return None
        roll = rng.random()
        if roll < 0.10:
            return None
        if roll < 0.40:
            words = [w for w in venue.split() if w.lower() not in STOP_WORDS]
            return " ".join(w[: rng.randint(4, 6)] if len(w) > 6 else w for w in words)
        if roll < 0.50:
            return venue.replace(" and ", " & ")
        return venue

    def pages(self, pages: str | None) -> str | None:
        rng = self.rng
        if pages is None:
            return None
        roll = rng.random()
        if roll < 0.10:
            return None
        match = re.fullmatch(r"(\d+)-(\d+)", pages)
        if roll < 0.40 and match and len(match.group(1)) == len(match.group(2)) > 1:
            start, end = match.groups()
            keep = next((i for i in range(len(end)) if start[i] != end[i]), len(end) - 1)
            return f"{start}-{end[keep:]}"
        return pages

    def copy(self, work: Paper, number: int) -> Paper:
        rng = self.rng
        year = work.year
        if year and rng.random() < 0.04:
            year += rng.choice((-1, 1))
        return work.model_copy(
            update={
                "record_id": f"copy-{number}",
                "title": self.title(work.title),
                "authors": self.authors(list(work.authors)),
                "venue": self.venue(work.venue),
                "pages": self.pages(work.pages),
                "volume": None if rng.random() < 0.05 else work.volume,
                "year": year,
                "published": None,
                "abstract": None if rng.random() < 0.5 else work.abstract,
                "ids": work.ids.model_copy(
                    update={"doi": None if rng.random() < 0.4 else work.ids.doi}
                ),
                "provenance": [Provenance(source="synthetic", source_id=f"copy-{number}")],
            }
        )


def generate(total: int, seed: int) -> tuple[list[Record], list[int]]:
    """``total`` records and each record's work number."""
    rng = random.Random(seed)
    generator = Generator(seed_works(), rng)
    records: list[Record] = []
    truth: list[int] = []
    work_number = 0
    while len(records) < total:
        if work_number < len(generator.seeds):
            work = generator.seeds[work_number]
        else:
            work = generator.synthetic_work()
        for copy in range(min(generator.copies(), total - len(records))):
            record = work if copy == 0 else generator.copy(work, len(records))
            records.append(record.model_copy(update={"record_id": f"r{len(records)}"}))
            truth.append(work_number)
        work_number += 1
    order = list(range(len(records)))
    rng.shuffle(order)
    return [records[i] for i in order], [truth[i] for i in order]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()

    built = time.perf_counter()
    records, truth = generate(args.records, args.seed)
    print(f"generated {len(records)} records in {time.perf_counter() - built:.1f} s")
    rss_before = peak_rss_mib()
    started = time.perf_counter()
    found = find_clusters(records)
    seconds = time.perf_counter() - started
    figures = score(found, truth)
    precision = (
        figures.true_positives / figures.found if figures.found else 1.0
    )  # per record: marked duplicates that are right
    result = ScaleResult(
        records=len(records),
        works=len(set(truth)),
        true_duplicates=figures.true_duplicates,
        found=figures.found,
        false_positives=figures.false_positives,
        seconds=seconds,
        records_per_second=len(records) / seconds,
        peak_rss_before_mib=rss_before,
        peak_rss_mib=peak_rss_mib(),
        precision=precision,
        recall=figures.sensitivity,
        pair_precision=figures.pair_precision,
        pair_recall=figures.pair_recall,
    )
    print(
        f"{'records':>8} {'works':>7} {'true dups':>9} {'found':>7} {'FP':>5} {'seconds':>8} "
        f"{'rec/s':>7} {'peak RSS MiB':>12} {'precision':>9} {'recall':>7} "
        f"{'pair P':>7} {'pair R':>7}"
    )
    r = result
    print(
        f"{r.records:8d} {r.works:7d} {r.true_duplicates:9d} {r.found:7d} "
        f"{r.false_positives:5d} {r.seconds:8.2f} {r.records_per_second:7.0f} "
        f"{r.peak_rss_mib:12.0f} {r.precision:9.4f} {r.recall:7.4f} "
        f"{r.pair_precision:7.4f} {r.pair_recall:7.4f}"
    )
    print(
        f"(peak RSS of the whole process; {r.peak_rss_before_mib:.0f} MiB before find_clusters, "
        "i.e. seeds and generated records; precision/recall per record as in bench/dedup.py)"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(asdict(result), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
