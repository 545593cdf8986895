"""What an outside tester typed that was read wrong: "not before 2017" (a date, and no
crash), "except animal studies", "w/", markup, and words of mood or correction that name
no topic ("cool, now switch:", "no wait, I meant")."""

from __future__ import annotations

import pytest

from tests.understanding.conversation import chain


@pytest.mark.parametrize(
    ("said", "years"),
    [
        ("not before 2017 please", (2017, None)),
        ("not after 2017", (None, 2017)),
        ("not interested in anything older than 2015", (2015, None)),
    ],
)
def test_a_date_said_with_not_is_the_years_left(said: str, years: tuple[int, int]) -> None:
    reading, topic = chain("HPV vaccine cervical cancer", said)[1]
    assert reading == "slot_fill"
    assert (topic.year_from, topic.year_to) == years
    assert topic.query() == "HPV vaccine cervical cancer"


@pytest.mark.parametrize("said", ["except animal studies", "excluding animal studies"])
def test_leaving_out_animal_studies_limits_to_people(said: str) -> None:
    assert chain("statins and dementia", said)[1][1].query() == "statins dementia humans"


def test_with_written_w_slash_is_no_word() -> None:
    topic = chain("lithium-sulfur batteries solid state electrolytes", "compare w/ sodium-ion")
    assert topic[1][1].query() == "lithium-sulfur batteries solid state electrolytes sodium-ion"


def test_markup_names_no_topic() -> None:
    assert chain("<b>aspirin</b> for stroke")[0][1].query() == "aspirin stroke"


def test_words_of_mood_and_correction_name_no_topic() -> None:
    steps = chain(
        "lithium-sulfur batteries",
        "cool, now switch: microplastics in freshwater fish",
        "no wait, I meant in zebrafish",
    )
    assert steps[1][0] == "new_question"
    assert steps[1][1].query() == "microplastics freshwater fish"
    assert steps[2][1].query() == "microplastics zebrafish"


def test_a_level_of_schooling_gives_way_to_the_one_asked_about() -> None:
    steps = chain("flipped classroom in undergrad physics", "what about high school")
    assert steps[1][1].query() == "flipped classroom physics high school"
