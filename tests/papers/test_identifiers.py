from __future__ import annotations

import pytest

from scholarstream.papers import (
    Author,
    Identifiers,
    Paper,
    normalize_arxiv_id,
    normalize_doi,
    normalize_nct_id,
    normalize_orcid,
    normalize_pmid,
    normalize_title,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://doi.org/10.3390/ANI15010003", "10.3390/ani15010003"),
        ("doi: 10.1000/xyz123.", "10.1000/xyz123"),
        ("http://dx.doi.org/10.1016/S0140-6736(20)30183-5", "10.1016/s0140-6736(20)30183-5"),
        ("not a doi", None),
        ("", None),
    ],
)
def test_doi(raw: str, expected: str | None) -> None:
    assert normalize_doi(raw) == expected


def test_other_identifiers() -> None:
    assert normalize_pmid("PMID: 0029768149") == "29768149"
    assert normalize_pmid("12a") is None
    assert normalize_arxiv_id("http://arxiv.org/abs/1707.08567v2") == "1707.08567"
    assert normalize_arxiv_id("arXiv:astro-ph/0601001v1") == "astro-ph/0601001"
    assert normalize_nct_id("see nct00465816 for details") == "NCT00465816"
    assert normalize_orcid("https://orcid.org/0000-0002-3082-303x") == "0000-0002-3082-303X"
    assert normalize_orcid("0000000230823038") == "0000-0002-3082-3038"
    assert normalize_title("  The  Effect of X-rays: a Trial. ") == "the effect of x rays a trial"


def test_records_normalise_on_the_way_in() -> None:
    paper = Paper(
        title="  Aspirin\n and   stroke ",
        ids=Identifiers(doi="https://doi.org/10.1000/ABC", pmid="00042"),
        authors=[Author(name="Doe, J", orcid="https://orcid.org/0000-0002-3082-3038")],
        published="2020-05-01",
    )
    assert paper.title == "Aspirin and stroke"
    assert (paper.ids.doi, paper.ids.pmid, paper.year) == ("10.1000/abc", "42", 2020)
    assert paper.authors[0].orcid == "0000-0002-3082-3038"
    with pytest.raises(ValueError, match="title"):
        Paper(title="   ")


def test_author_names_are_split() -> None:
    assert Author.parse("Smith, John A") == Author(
        name="Smith, John A", family="Smith", given="John A"
    )
    parsed = Author.parse("John A Smith")
    assert parsed is not None and (parsed.family, parsed.given) == ("Smith", "John A")
    assert Author.parse("  ;  ") is None
