"""Build the ``dblp_acm_journals`` labelled set from the DBLP-ACM benchmark.

The DBLP-ACM entity-resolution benchmark (Köpcke, Thor, Rahm, Leipzig database group) holds
the same database-research articles as DBLP and the ACM Digital Library list them (title,
authors, venue, year). Its tables ship with the BSD-licensed ``py-entitymatching`` package
(``py_entitymatching/datasets/DBLP.csv`` and ``ACM.csv``); the true matches are the
benchmark's ``DBLP-ACM_perfectMapping.csv``, of which the rows of the two journals used here
(SIGMOD Record, ACM TODS) are kept next to the set as ``perfect_mapping_journals.txt``
(``s`` = ``journals/sigmod/``, ``t`` = ``journals/tods/``).

The set: every DBLP record of ``journals/sigmod`` and ``journals/tods`` and every ACM record
of "ACM SIGMOD Record" and "ACM Transactions on Database Systems (TODS)", one row each, in
the layout of ../shared/data/dedup; a mapped DBLP/ACM pair is one true cluster. SIGMOD
Record prints a dozen "Editor's Notes", "Chair's Message" and "Reminiscences on
Influential Papers" a year by one author: titles shared by different works.

    python bench/dedup_build_dblp_acm.py PATH/TO/py_entitymatching/datasets
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data" / "dedup" / "dblp_acm_journals"
PREFIX = {"s": "journals/sigmod/", "t": "journals/tods/"}
DBLP_VENUES = ("journals/sigmod/", "journals/tods/")
ACM_VENUES = ("ACM SIGMOD Record", "ACM Transactions on Database Systems (TODS)")
COLUMNS = ("ID", "ENTRYTYPE", "source", "source_id", "author", "title", "year", "journal")


def _rows(path: Path) -> list[dict[str, str]]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return list(csv.DictReader(text.splitlines()))


def _authors(names: str) -> str:
    """ "Gottfried Vossen, Mathias Weske" -> "Vossen, Gottfried and Weske, Mathias"."""
    people = []
    for name in (part.strip() for part in names.split(",")):
        if not name:
            continue
        given, _, family = name.rpartition(" ")
        people.append(f"{family}, {given}" if given else family)
    return " and ".join(people)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path, help="py_entitymatching/datasets directory")
    args = parser.parse_args()
    dblp = [r for r in _rows(args.datasets / "DBLP.csv") if r["id"].startswith(DBLP_VENUES)]
    acm = [r for r in _rows(args.datasets / "ACM.csv") if r["venue"] in ACM_VENUES]
    mapping = {}
    for line in (HERE / "perfect_mapping_journals.txt").read_text().splitlines():
        prefix, dblp_id, acm_id = line.split()
        mapping[PREFIX[prefix] + dblp_id] = acm_id
    number: dict[tuple[str, str], str] = {}
    with (HERE / "records_pre_merged.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        for source, rows in (("dblp", dblp), ("acm", acm)):
            for row in rows:
                record_id = f"id_{len(number) + 1:07d}"
                number[(source, row["id"])] = record_id
                writer.writerow(
                    {
                        "ID": record_id,
                        "ENTRYTYPE": "article",
                        "source": source,
                        "source_id": row["id"],
                        "author": _authors(row["authors"]),
                        "title": row["title"],
                        "year": row["year"].split(".")[0],
                        "journal": row["venue"],
                    }
                )
    with (HERE / "merged_record_ids.csv").open("w", encoding="utf-8", newline="") as handle:
        ids_writer = csv.writer(handle)
        ids_writer.writerow(["merged_ids"])
        for dblp_id, acm_id in mapping.items():
            ids_writer.writerow([f"{number[('dblp', dblp_id)]};{number[('acm', acm_id)]}"])


if __name__ == "__main__":
    main()
