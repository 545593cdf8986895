"""Generate the ``adversarial_fields`` labelled set: journal furniture outside biomedicine.

Information systems, management, engineering and computer science journals print many
distinct items under one title in one volume and year by one editor: "Editor's
Comments", "Introduction to the Special Issue", "Book Review", "Reply", "Call for
Papers", "Reviewer Acknowledgments", a column in every issue, parts of a series ("Part
1", "Part 2"), a paper in two parts with the same title, and the conference version of a
journal article. They differ only in issue, pages or DOI. Each work here gets one record
as the publisher lists it and, for some, copies written the way other databases write
them (issue or DOI missing, "pp." pages, an abbreviated or publisher-prefixed venue, title
case, initials), so the set measures both: no false merge, and the copies found.

Seeded, so every run writes the same files (the layout of ../shared/data/dedup):

    python bench/dedup_adversarial.py [--out bench/data/dedup/adversarial_fields]
"""

from __future__ import annotations

import argparse
import csv
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "dedup" / "adversarial_fields"
COLUMNS = (
    "ID", "ENTRYTYPE", "author", "title", "year", "journal", "booktitle", "volume", "issue",
    "pages", "doi",
)  # fmt: skip

# (full name, abbreviations other databases use, DOI prefix, editor, first volume year)
JOURNALS = (
    ("MIS Quarterly", ("MIS Q.", "Management Information Systems Quarterly"), "10.25300/MISQ",
     "Rai, Arun", 1977),
    ("Information Systems Research", ("Inf. Syst. Res.", "ISR"), "10.1287/isre",
     "Kim, Sung Hyun", 1990),
    ("Academy of Management Review", ("Acad. Manage. Rev.", "AMR"), "10.5465/amr",
     "Shepherd, Dean A.", 1976),
    ("IEEE Transactions on Software Engineering",
     ("IEEE Trans. Softw. Eng.", "Transactions on Software Engineering"), "10.1109/TSE",
     "Uchitel, Sebastian", 1975),
    ("ACM Computing Surveys", ("ACM Comput. Surv.", "Computing Surveys"), "10.1145/CSUR",
     "Atienza, David", 1969),
    ("Journal of Construction Engineering and Management",
     ("J. Constr. Eng. Manage.", "J Constr Eng Manag"), "10.1061/JCEM",
     "Chinowsky, Paul", 1983),
)  # fmt: skip
ITEMS = (
    "Editor's Comments",
    "Editorial",
    "Introduction to the Special Issue",
    "Book Review",
    "Book Review",
    "Call for Papers",
    "Reviewer Acknowledgments",
    "From the Editor",
    "Guest Editors' Introduction",
    "Editor's Note",
)
REVIEWERS = ("Lee, Allen S.", "Markus, M. Lynne", "Orlikowski, Wanda J.", "Zmud, Robert W.")
GUEST = ("Benbya, Hind", "Leidner, Dorothy E.", "Gregor, Shirley", "Hevner, Alan R.")
TOPICS = (
    "Design Science Research in Information Systems",
    "Platform Ecosystems and Complementor Strategy",
    "Technical Debt in Large Software Systems",
    "Lean Construction Scheduling under Uncertainty",
)


@dataclass
class Record:
    work: int
    title: str
    authors: list[str]
    year: int
    journal: str = ""
    booktitle: str = ""
    volume: str = ""
    issue: str = ""
    pages: str = ""
    doi: str = ""
    entrytype: str = "article"
    copies: list[Record] = field(default_factory=list)


def _initials(name: str) -> str:
    family, _, given = name.partition(", ")
    return f"{family}, {' '.join(part[0] + '.' for part in given.split())}" if given else name


def _copy(rng: random.Random, work: Record, abbreviations: tuple[str, ...]) -> Record:
    """The work as another database writes it."""
    copy = replace(work, copies=[])
    if rng.random() < 0.5:
        copy.issue = ""
    if rng.random() < 0.5 and copy.pages:
        copy.pages = "pp. " + copy.pages
    if rng.random() < 0.6 and copy.journal:
        copy.journal = rng.choice(abbreviations)
    if rng.random() < 0.5:
        copy.doi = ""
    if not copy.doi and not copy.pages:
        copy.pages = work.pages
    if rng.random() < 0.3:
        copy.title = copy.title.upper() if rng.random() < 0.5 else copy.title.lower()
    if rng.random() < 0.5:
        copy.authors = [_initials(name) for name in copy.authors]
    return copy


def works(rng: random.Random) -> list[Record]:
    made: list[Record] = []

    def add(record: Record, abbreviations: tuple[str, ...], copies: int) -> None:
        record.work = len(made)
        made.append(record)
        record.copies = [_copy(rng, record, abbreviations) for _ in range(copies)]

    for name, abbreviations, prefix, editor, first_year in JOURNALS:
        for year in (2018, 2019):
            volume = str(year - first_year + 1)
            page = 1
            for issue in range(1, 5):
                for number, item in enumerate(ITEMS):
                    if item.startswith(("Call", "Reviewer")) and issue not in (1, 4):
                        continue
                    if item == "Book Review":
                        authors = [REVIEWERS[(number + issue) % len(REVIEWERS)]]
                    elif "Guest" in item or "Special" in item:
                        authors = [GUEST[issue % len(GUEST)], GUEST[(issue + 1) % len(GUEST)]]
                    else:
                        authors = [editor]
                    length = rng.randint(1, 4)
                    record = Record(
                        0, item, authors, year, journal=name, volume=volume, issue=str(issue),
                        pages=f"{page}-{page + length - 1}" if length > 1 else str(page),
                        doi=f"{prefix}/{year}.{volume}.{issue}.{number:02d}",
                    )  # fmt: skip
                    page += length
                    add(record, abbreviations, rng.choice((0, 0, 1, 1, 2)))
                # a paper in two parts with one title, and a series "Part 1" / "Part 2"
                topic = TOPICS[(issue + year) % len(TOPICS)]
                if issue in (2, 3):
                    for title in (f"{topic}: A Research Agenda", f"{topic}, Part {issue - 1}"):
                        record = Record(
                            0, title, [GUEST[0], GUEST[2]], year, journal=name, volume=volume,
                            issue=str(issue), pages=f"{page}-{page + 19}",
                            doi=f"{prefix}/{year}.{volume}.{issue}.p{len(made)}",
                        )  # fmt: skip
                        page += 20
                        add(record, abbreviations, rng.choice((0, 1)))
            # the conference version of an article: same title and authors, no volume
            title = f"{TOPICS[year % len(TOPICS)]} in {name.split()[-1]} Practice"
            article = Record(
                0, title, [GUEST[1], GUEST[3]], year, journal=name, volume=volume, issue="1",
                pages=f"{page}-{page + 24}", doi=f"{prefix}/{year}.{volume}.c{len(made)}",
            )  # fmt: skip
            add(article, abbreviations, 1)
            conference = Record(
                0, title, [GUEST[1], GUEST[3]], year - 1, entrytype="inproceedings",
                booktitle=f"Proceedings of the International Conference on {name}",
                pages="1-15",
            )  # fmt: skip
            add(conference, (), 0)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = [copy for work in works(rng) for copy in (work, *work.copies)]
    rng.shuffle(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    clusters: dict[int, list[str]] = {}
    with (args.out / "records_pre_merged.csv").open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        for number, row in enumerate(rows, 1):
            record_id = f"id_{number:07d}"
            clusters.setdefault(row.work, []).append(record_id)
            writer.writerow(
                {
                    "ID": record_id, "ENTRYTYPE": row.entrytype,
                    "author": " and ".join(row.authors), "title": row.title,
                    "year": row.year, "journal": row.journal, "booktitle": row.booktitle,
                    "volume": row.volume, "issue": row.issue, "pages": row.pages,
                    "doi": row.doi,
                }
            )  # fmt: skip
    with (args.out / "merged_record_ids.csv").open("w", encoding="utf-8", newline="") as out:
        ids_writer = csv.writer(out)
        ids_writer.writerow(["merged_ids"])
        for ids in clusters.values():
            if len(ids) > 1:
                ids_writer.writerow([";".join(ids)])


if __name__ == "__main__":
    main()
