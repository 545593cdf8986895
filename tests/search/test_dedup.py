"""Deduplication rules, merging, and accuracy on the labelled sets in ../shared/data/dedup
(read through the product's CSV import)."""

from __future__ import annotations

import csv
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from scholarstream.papers import Author, Identifiers, Paper, Provenance, Record, Trial
from scholarstream.papers.dedup import (
    RecordDeduplicator,
    Verdict,
    compare,
    find_clusters,
    merge_records,
    record_keys,
)
from scholarstream.papers.formats import RecordProblem, read_file
from tests.conftest import SHARED_DATA

DEDUP = SHARED_DATA / "dedup"


def paper(title: str, **fields: Any) -> Paper:
    """A paper; ``authors`` as ``"Family, Given; ..."``, identifiers as keywords."""
    names = fields.pop("authors", "Zuna, R E; Wang, S S; Schiffman, M")
    ids = {k: fields.pop(k) for k in ("doi", "pmid", "pmcid", "arxiv_id") if k in fields}
    source = fields.pop("source", "test")
    return Paper.model_validate(
        {
            "title": title,
            "authors": [Author.parse(name) for name in names.split(";")] if names else [],
            "ids": ids,
            "provenance": [{"source": source, "source_id": fields.get("record_id")}],
            **fields,
        }
    )


def verdict(a: Record, b: Record) -> Verdict:
    return compare(record_keys(a), record_keys(b)).verdict


TITLE = (
    "Comparison of human papillomavirus distribution in cytologic subgroups of low-grade "
    "squamous intraepithelial lesion"
)
ARTICLE = paper(
    TITLE, venue="Cancer", volume="108", issue="5", pages="288-297", year=2006, doi="10.1000/abc"
)


# -- identifiers ----------------------------------------------------------------------------


def test_a_shared_identifier_merges_despite_other_fields() -> None:
    for ids in ({"doi": "https://doi.org/10.1000/ABC"}, {"pmid": "16998937"}, {"pmcid": "PMC123"}):
        a = paper(TITLE.upper(), venue="Cancer", year=2006, **ids)
        b = paper(TITLE + ".", venue="Cancer Cytopathology", year=2008, authors="", **ids)
        assert verdict(a, b) is Verdict.DUPLICATE, ids


def test_a_supplement_doi_shared_by_other_abstracts_does_not_merge() -> None:
    doi = "10.2337/db14-0001"
    a = paper("Liraglutide lowers plaque burden in mice", venue="Diabetes", doi=doi)
    b = paper("Sitagliptin and survival after infarction", venue="Diabetes", doi=doi)
    assert verdict(a, b) is Verdict.DISTINCT


def test_different_dois_keep_a_review_and_its_update_apart() -> None:
    title = "Music therapy for acquired brain injury"
    common = {"venue": "Cochrane Database of Systematic Reviews", "authors": "Bradt, J; Magee, W L"}
    first = paper(title, year=2010, doi="10.1002/14651858.CD006787.pub2", **common)
    update = paper(title, year=2017, doi="10.1002/14651858.CD006787.pub3", **common)
    same_year = paper(title, year=2010, doi="10.1002/14651858.CD006787.pub3", **common)
    assert verdict(first, update) is Verdict.DISTINCT
    assert verdict(first, same_year) is Verdict.DISTINCT
    assert find_clusters([first, update]) == [[0], [1]]


# -- fuzzy matching ---------------------------------------------------------------------------


def test_format_differences_of_one_article_merge() -> None:
    copy = paper(
        TITLE.lower() + ". [Chinese]",
        authors="Zuna, RE; Wang, SS; Schiffman, M; Solomon, D",
        venue="Cancer.",
        volume="108",
        pages="288-97",
        year=2006,
    )
    assert verdict(ARTICLE, copy) is Verdict.DUPLICATE


def test_journal_abbreviations_and_page_ranges_agree() -> None:
    full = paper(
        "Sitagliptin attenuated brain damage in mice with chronic cerebral hypo-perfusion",
        venue="Journal of Hypertension",
        volume="33",
        pages="1001-1013",
        year=2015,
    )
    short = paper(
        "Sitagliptin attenuated brain damage in mice with chronic cerebral hypoperfusion",
        venue="J Hypertens",
        volume="33",
        pages="1001-13",
        year=2016,  # print year after the online year
    )
    assert verdict(full, short) is Verdict.DUPLICATE
    last_page = full.model_copy(update={"venue": "J. Hypertens.", "pages": "1013"})
    assert verdict(full, last_page) is Verdict.DUPLICATE  # a page within the range
    bmj = paper(TITLE, venue="BMJ", volume="337", pages="a1754", year=2008)
    print_bmj = paper(
        TITLE, venue="British Medical Journal", volume="337", pages="969-972", year=2008
    )
    assert verdict(bmj, print_bmj) is Verdict.DUPLICATE  # an article number is not a page


def test_a_copy_without_volume_or_pages_merges_on_same_venue_and_year() -> None:
    a = paper(TITLE, venue="Ann Intern Med", year=2011)
    b = paper(TITLE, venue="Annals of Internal Medicine", year=2011)
    assert verdict(a, b) is Verdict.DUPLICATE


def test_the_same_title_in_another_journal_is_another_record() -> None:
    abstract = paper(
        TITLE,
        venue="Canadian Journal of Neurological Sciences",
        volume="37",
        pages="S99",
        year=2010,
    )
    paper_version = paper(TITLE, venue="Stroke", volume="41", pages="e494", year=2010)
    assert verdict(abstract, paper_version) is Verdict.DISTINCT


def test_same_title_by_other_authors_is_another_work() -> None:
    title = "Review of Memory rehabilitation: Integrating theory and practice"
    a = paper(title, authors="Balon, Richard", venue="Annals of Clinical Psychiatry", year=2010)
    b = paper(title, authors="Merker, Brad", venue="Brain Injury", year=2010)
    assert verdict(a, b) is Verdict.DISTINCT


def test_years_apart_are_different_works() -> None:
    later = paper(TITLE, venue="Cancer", volume="108", pages="288-297", year=2009)
    assert verdict(ARTICLE, later) is Verdict.DISTINCT


# -- traps ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "notice",
    [
        f"Erratum: {TITLE}",
        f"Correction to: {TITLE}",
        f'"{TITLE}": Correction',
        f"Reply to: {TITLE}",
        f"Comment on: {TITLE}",
        f"Retraction: {TITLE}",
    ],
)
def test_notices_never_merge_with_the_article(notice: str) -> None:
    # Same venue, volume, authors and even DOI: still another work.
    erratum = paper(notice, venue="Cancer", volume="108", pages="288", year=2006, doi="10.1000/abc")
    assert verdict(ARTICLE, erratum) is Verdict.DISTINCT
    assert find_clusters([ARTICLE, erratum]) == [[0], [1]]


def test_a_title_starting_with_correction_of_is_no_notice() -> None:
    title = "Correction of post-stroke cognitive impairments using computer programs"
    a = paper(title, venue="Zh Nevrol Psikhiatr", volume="113", pages="12-16", year=2013)
    b = paper(title + ".", venue="Zh Nevrol Psikhiatr", volume="113", pages="12-6", year=2013)
    assert verdict(a, b) is Verdict.DUPLICATE


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (
            "Auckland Stroke Outcomes Study. Part I: gender",
            "Auckland Stroke Outcomes Study. Part II: gender",
        ),
        (
            "Trial of drug X in stroke: phase 2 results",
            "Trial of drug X in stroke: phase 3 results",
        ),
        ("Stroke rehabilitation 1: principles", "Stroke rehabilitation 2: principles"),
    ],
)
def test_parts_and_phases_are_different_works(one: str, other: str) -> None:
    a = paper(one, venue="Neurology", volume="75", pages="1597-1607", year=2010)
    b = paper(other, venue="Neurology", volume="75", pages="1608-1616", year=2010)
    assert verdict(a, b) is Verdict.DISTINCT
    c = paper(other, venue="Neurology", year=2010)  # nothing but venue and year to go on
    assert verdict(a, c) is Verdict.DISTINCT


def test_a_chain_never_joins_records_that_conflict() -> None:
    # B is a year off from A and from C (online and print years), A and C are two years
    # apart: A, B and C cannot all be one work.
    a, b, c = (
        paper(TITLE, venue="Cancer", volume="108", pages="288-297", year=year)
        for year in (2006, 2007, 2008)
    )
    assert verdict(a, b) is verdict(b, c) is Verdict.DUPLICATE
    assert sorted(len(cluster) for cluster in find_clusters([a, b, c])) == [1, 2]


def test_a_trial_and_a_paper_are_never_one_work() -> None:
    trial = Trial(title=TITLE, ids=Identifiers(nct_id="NCT01234567"))
    again = Trial(title=TITLE.lower(), ids=Identifiers(nct_id="nct01234567"))
    assert verdict(trial, ARTICLE) is Verdict.DISTINCT
    assert verdict(trial, again) is Verdict.DUPLICATE


def test_find_clusters_puts_every_record_in_one_cluster_in_order() -> None:
    copy = ARTICLE.model_copy(update={"title": TITLE.upper()})
    other = paper("Something else entirely about vaccines", venue="Vaccine", year=2001)
    clusters = find_clusters([other, ARTICLE, other.model_copy(), copy])
    assert clusters == [[0, 2], [1, 3]]
    assert find_clusters([]) == []


# -- merging ----------------------------------------------------------------------------------


async def test_merged_record_keeps_every_identifier_and_provenance() -> None:
    pubmed = paper(
        TITLE,
        authors="Zuna, R E; Wang, S S",
        venue="Cancer",
        volume="108",
        pages="288-97",
        year=2006,
        pmid="16998937",
        abstract="Short.",
        keywords=["HPV"],
        source="pubmed",
        record_id="16998937",
    )
    crossref = paper(
        TITLE + ".",
        authors="Zuna, Rosemary E; Wang, Sophia S; Schiffman, Mark; Solomon, Diane",
        venue="Cancer Cytopathology",
        volume="108",
        pages="288-297",
        year=2006,
        doi="10.1002/cncr.22187",
        abstract="A much longer abstract that says more about the study.",
        keywords=["hpv", "LSIL"],
        source="crossref",
        record_id="10.1002/cncr.22187",
    )
    other = paper("Something else entirely about vaccines", venue="Vaccine", year=2001)
    merged = await RecordDeduplicator().deduplicate([pubmed, other, crossref])
    assert len(merged) == 2
    record = merged[0]
    assert isinstance(record, Paper)
    assert record.ids.pmid == "16998937" and record.ids.doi == "10.1002/cncr.22187"
    assert [p.source for p in record.provenance] == ["pubmed", "crossref"]
    assert record.record_id == "16998937"
    assert record.abstract == crossref.abstract
    assert len(record.authors) == 4
    assert record.venue == "Cancer Cytopathology"
    assert record.pages == "288-297"
    assert record.keywords == ["HPV", "LSIL"]
    assert merged[1] == other


def test_merging_unites_provenance_without_repeats() -> None:
    a = ARTICLE.model_copy(update={"provenance": [Provenance(source="pubmed", source_id="1")]})
    b = ARTICLE.model_copy(
        update={
            "provenance": [
                Provenance(source="pubmed", source_id="1"),
                Provenance(source="openalex", source_id="W1"),
            ]
        }
    )
    merged = merge_records([a, b])
    assert [(p.source, p.source_id) for p in merged.provenance] == [
        ("pubmed", "1"),
        ("openalex", "W1"),
    ]
    with pytest.raises(ValueError, match="never one work"):
        merge_records([ARTICLE, Trial(title=TITLE)])


# -- the labelled sets ------------------------------------------------------------------------

_ID = re.compile(r"^(?:id_)?0*(\d+)$")


def _canonical(value: str) -> str:
    match = _ID.match(value.strip())
    return match.group(1) if match else value.strip()


def labelled_set(name: str) -> tuple[list[Record], list[int]]:
    directory = DEDUP / name
    records_file = next(
        p
        for p in (directory / "records_pre_merged.csv", directory / "labelled_test_set.csv")
        if p.exists()
    )
    clusters_file = next(
        p
        for p in (directory / "merged_record_ids.csv", *directory.glob("*clusters*.csv"))
        if p.exists()
    )
    records = [r for r in read_file(records_file) if not isinstance(r, RecordProblem)]
    cluster_of: dict[str, int] = {}
    with clusters_file.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle)):
            for record_id in row["merged_ids"].split(";"):
                cluster_of[_canonical(record_id)] = number
    singles = itertools.count(len(cluster_of) + 1)
    truth = [cluster_of.get(_canonical(r.record_id or "")) for r in records]
    return records, [label if label is not None else next(singles) for label in truth]


def as_sets(clusters: list[list[int]]) -> set[frozenset[int]]:
    return {frozenset(cluster) for cluster in clusters}


def test_special_cases_match_their_truth_exactly() -> None:
    records, truth = labelled_set("special_cases")
    expected: dict[int, set[int]] = {}
    for index, label in enumerate(truth):
        expected.setdefault(label, set()).add(index)
    assert as_sets(find_clusters(records)) == {frozenset(c) for c in expected.values()}


@pytest.mark.parametrize("name", ["stroke", "cytology_screening", "asysd_diabetes"])
def test_labelled_sets_have_no_false_merges(name: str) -> None:
    records, truth = labelled_set(name)
    clusters = find_clusters(records)
    assert sorted(i for c in clusters for i in c) == list(range(len(records)))
    mixed = [c for c in clusters if len({truth[i] for i in c}) > 1]
    assert mixed == []
    first: dict[int, int] = {}
    for index, label in enumerate(truth):
        first.setdefault(label, index)
    true_duplicates = sum(1 for i, label in enumerate(truth) if first[label] != i)
    found = sum(len(c) - 1 for c in clusters)
    assert found / true_duplicates >= 0.97


def test_data_is_read_from_the_shared_folder() -> None:
    assert Path(DEDUP).is_dir(), "tests read ../shared/data/dedup"
