"""A chat message's scope slots: places, dates, trial phases (Arabic or Roman numerals),
populations and organisations, each with the phrase it was read from."""

from __future__ import annotations

import pytest

from scholarstream.understanding import Slots, read_slots, trial_phase


@pytest.mark.parametrize(
    ("text", "phases"),
    [
        ("phase 3 trials", ("phase 3",)),
        ("Phase III trials", ("phase 3",)),
        ("phase ii/iii", ("phase 2",)),
        ("phase IV and phase 4 data", ("phase 4",)),
        ("phase 1 and phase ii", ("phase 1", "phase 2")),
        ("phases of the moon", ()),
    ],
)
def test_trial_phases_in_arabic_or_roman_numerals(text: str, phases: tuple[str, ...]) -> None:
    assert read_slots(text)[0].phases == phases


def test_a_roman_numeral_is_its_number() -> None:
    assert [trial_phase(n) for n in ("1", "ii", "III", "iv")] == [
        "phase 1",
        "phase 2",
        "phase 3",
        "phase 4",
    ]


def test_the_slots_of_a_message_and_their_phrases() -> None:
    slots, phrases = read_slots(
        "phase III trials in Texas and the EU since 2020 in older adults, sponsored by Pfizer"
    )
    assert slots == Slots(
        jurisdictions=("Texas", "EU"),
        date_range="since 2020",
        phases=("phase 3",),
        populations=("older adults",),
        organisations=("Pfizer",),
    )
    assert phrases == [
        "Texas",
        "EU",
        "since 2020",
        "phase III",
        "older adults",
        "sponsored by Pfizer",
    ]


def test_the_last_date_phrase_is_the_date_slot() -> None:
    assert read_slots("between 2010 and 2015, no, since 2020")[0].date_range == "since 2020"


def test_lower_case_us_is_a_word_not_a_place() -> None:
    assert read_slots("tell us about the US")[0].jurisdictions == ("US",)
