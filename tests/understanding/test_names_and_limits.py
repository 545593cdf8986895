"""Names that hold an animal or a verb, limits said in words (study designs, humans only,
years shut out), and what a follow-up keeps when it asks about a facet or a setting."""

from __future__ import annotations

import datetime as dt

import pytest

from scholarstream.understanding import TopicReading, find_study_types, follow, read_message

TODAY = dt.date(2026, 11, 27)


def _chain(*messages: str) -> list[tuple[str, TopicReading]]:
    topic: TopicReading | None = None
    steps: list[tuple[str, TopicReading]] = []
    for message in messages:
        step = follow(topic, read_message(message, TODAY))
        topic = step.topic
        steps.append((step.reading, topic))
    return steps


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.text) for v in read_message(text, TODAY).values]


def test_an_animal_inside_a_disease_s_name_names_no_population() -> None:
    assert ("population", "african swine") not in _kinds("african swine fever vaccines")
    assert _kinds("bovine tuberculosis in badgers") == [
        ("condition", "bovine tuberculosis"),
        ("population", "badgers"),
    ]


def test_a_disease_with_the_same_head_takes_its_sibling_s_place_inside_a_value() -> None:
    steps = _chain(
        "african swine fever vaccine candidates in development",
        "what about classical swine fever in wild boar",
    )
    query = steps[1][1].query()
    assert "classical swine fever vaccine" in query and "african" not in query
    assert "wild boar" in query


@pytest.mark.parametrize(
    ("said", "study_type"),
    [
        ("cluster randomised only", "randomized controlled trial"),
        ("only double-blind trials", "randomized controlled trial"),
        ("prospective cohorts", "cohort study"),
        ("reviews only", "review"),
        ("qualitative studies only", "qualitative study"),
        ("longitudinal studies", "longitudinal study"),
    ],
)
def test_study_designs_said_in_many_ways_are_limits(said: str, study_type: str) -> None:
    _, found = find_study_types(said)
    assert found == [study_type]


def test_non_randomised_studies_are_no_randomised_trials() -> None:
    assert find_study_types("non-randomised studies")[1] == []


@pytest.mark.parametrize(
    "said", ["human studies only", "no animal studies", "exclude animal studies", "humans only"]
)
def test_humans_only_is_a_limit_to_people_not_words_about_animals(said: str) -> None:
    steps = _chain("SGLT2 inhibitors in heart failure", said)
    reading, topic = steps[1]
    assert reading == "slot_fill"
    assert topic.query() == "SGLT2 inhibitors heart failure humans"


@pytest.mark.parametrize(
    ("said", "years"),
    [
        ("nothing before 2019", (2019, None)),
        ("exclude anything published before 2015", (2015, None)),
        ("leave out pre-2000 work", (2000, None)),
        ("nothing after 2015", (None, 2015)),
    ],
)
def test_years_shut_out_leave_the_others(said: str, years: tuple[int | None, ...]) -> None:
    reading = read_message(said, TODAY)
    assert (reading.year_from, reading.year_to) == years
    assert reading.values == ()


def test_an_unknown_name_after_in_is_where_not_what_is_asked() -> None:
    steps = _chain("robotic hernia repair", "costs", "in the NHS")
    query = steps[2][1].query()
    assert "costs" in query and "NHS" in query


def test_a_facet_of_an_adverse_effect_keeps_the_effect() -> None:
    steps = _chain("CAR-T cell therapy neurotoxicity", "risk factors?", "what about cost?")
    assert "neurotoxicity risk factors" in steps[1][1].query()
    assert "risk factors" not in steps[2][1].query()


def test_forgetting_the_main_subject_for_another_starts_afresh() -> None:
    steps = _chain(
        "do smartphone bans in schools improve academic performance?",
        "any data from norway?",
        "in the last 3 years",
        "forget phones, what about four-day school weeks and achievement",
    )
    reading, topic = steps[3]
    assert reading == "new_question"
    assert topic.query() == "four-day school weeks achievement"
    assert (topic.year_from, topic.year_to) == (None, None)


def test_a_verb_of_effect_parts_the_treatment_from_the_outcome() -> None:
    assert _kinds("does the mediterranean diet slow cognitive decline?") == [
        ("intervention", "mediterranean diet"),
        ("condition", "cognitive decline"),
    ]
