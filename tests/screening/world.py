"""Screening test data: a small real review (Cohen 2006, triptans for migraine) as a CSV
the library imports, with the review's own inclusion labels to screen by."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from xml.etree import ElementTree

from tests.conftest import SHARED_DATA

TRIPTANS = SHARED_DATA / "screening" / "Cohen_2006" / "Triptans.csv"

KEYWORDS = ["triptan*", "sumatriptan", "migraine", "randomi*"]
INCLUSION = [
    "Randomised controlled trial of a triptan",
    "Adults with migraine",
]
EXCLUSION = [
    "Not a randomised controlled trial",
    "Not about a triptan",
    "Not migraine",
]
QUESTION = "How do the triptans compare in efficacy and tolerability for acute migraine?"


@dataclass(frozen=True)
class Review:
    """The records of the review subset, in file order, and which the review included."""

    csv_bytes: bytes
    titles: list[str]
    included: frozenset[str]

    def relevant(self, title: str) -> bool:
        return title in self.included


@cache
def triptans(included: int = 12, excluded: int = 28) -> Review:
    """The first ``included`` records the review included and ``excluded`` it did not,
    each with an abstract, interleaved as the file has them."""
    with TRIPTANS.open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["abstract"].strip() and r["title"].strip()]
    keep: list[dict[str, str]] = []
    counts = {True: 0, False: 0}
    wanted = {True: included, False: excluded}
    seen: set[str] = set()
    for row in rows:
        label = bool(int(float(row["label_included"] or 0)))
        if counts[label] < wanted[label] and row["title"] not in seen:
            keep.append(row)
            seen.add(row["title"])
            counts[label] += 1
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "authors", "abstract", "year", "pmid"])
    for row in keep:
        writer.writerow(
            [row["title"], row["authors"], row["abstract"], row["year"], row["pubmedID"]]
        )
    return Review(
        csv_bytes=out.getvalue().encode(),
        titles=[row["title"] for row in keep],
        included=frozenset(r["title"] for r in keep if int(float(r["label_included"] or 0))),
    )


def svg_words(svg: str) -> str:
    """The text of an SVG document the product drew, spaces made plain (it must parse)."""
    root = ElementTree.fromstring(svg)  # noqa: S314  (the product's own drawing, in a test)
    texts = root.iter("{http://www.w3.org/2000/svg}text")
    return " ".join("".join(t.itertext()) for t in texts).replace("\u00a0", " ")
