"""Lands and waters named as places ("the Atlantic forest", "the Mekong delta"), and a
word a follow-up swaps out inside a longer value, plural or singular alike."""

from __future__ import annotations

import pytest

from tests.understanding.conversation import chain, kinds_of


@pytest.mark.parametrize(
    ("said", "place"),
    [
        ("bird diversity in the Atlantic forest", "Atlantic forest"),
        ("fires in the amazon rainforest", "amazon rainforest"),
        ("Congo basin deforestation", "Congo basin"),
        ("rice yields in the mekong delta", "mekong delta"),
        ("understory birds in the amazon", "amazon"),
    ],
)
def test_a_land_or_a_water_is_a_place(said: str, place: str) -> None:
    assert ("place", place) in kinds_of(said)


@pytest.mark.parametrize(
    "said", ["amazon web services outages", "the lumbar region", "arctic sea ice"]
)
def test_a_company_a_body_part_or_a_thing_at_sea_is_no_land(said: str) -> None:
    assert not any(kind == "place" and " " in text for kind, text in kinds_of(said))


def test_a_place_said_in_its_land_replaces_the_place_in_play() -> None:
    steps = chain(
        "effects of forest fragmentation on understory bird diversity in the amazon",
        "and the Atlantic forest",
    )
    query = steps[1][1].query()
    assert "Atlantic forest" in query and "amazon" not in query.lower()


def test_what_is_dropped_in_the_plural_swaps_the_singular_inside_a_value() -> None:
    steps = chain(
        "microplastic ingestion by freshwater fish",
        "zebrafish lab studies",
        "nanoplastics rather than microplastics",
    )
    query = steps[2][1].query()
    assert "nanoplastics ingestion" in query and "microplastic" not in query
    assert "zebrafish" in query


def test_a_word_no_list_knows_before_for_a_condition_is_its_treatment() -> None:
    assert kinds_of("paxlovid for long covid")[0] == ("intervention", "paxlovid")
    assert ("intervention", "risk") not in kinds_of("risk for dementia")


def test_a_misspelt_drug_is_read_as_the_drug() -> None:
    assert kinds_of("metfromin vs insulin for gestational diabetes")[0] == (
        "intervention",
        "metformin",
    )


def test_a_condition_mesh_names_whole_is_not_a_drug_and_an_aspect() -> None:
    values = kinds_of("insulin resistance in PCOS")
    assert [text for _, text in values] == ["insulin resistance", "PCOS"]
