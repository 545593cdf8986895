"""A search question read by rule (concepts, synonyms, PICO, restrictions) and a stream
purpose's key phrases and organisation names."""

from __future__ import annotations

import datetime as dt

import scholarstream.understanding as understanding
from scholarstream.understanding import (
    ConceptReading,
    DateRange,
    PicoReading,
    key_phrases,
    proper_names,
    read_question,
    topic_phrases,
)

TODAY = dt.date(2025, 6, 15)


def test_a_clinical_question() -> None:
    reading = read_question(
        "Does metformin reduce mortality in adults with type 2 diabetes (T2D) since 2015? "
        "Only RCTs in English, not in children.",
        TODAY,
    )
    assert [c.term for c in reading.concepts] == ["metformin", "mortality", "type 2 diabetes"]
    diabetes = reading.concepts[2]
    assert "T2D" in diabetes.synonyms
    assert "type 2 diabetes" not in diabetes.synonyms
    assert reading.pico is not None
    assert reading.pico.population == "adults with type 2 diabetes"
    assert reading.pico.outcome == "mortality"
    assert reading.dates == DateRange(dt.date(2015, 1, 1), None)
    assert reading.study_types == ("randomized controlled trial",)
    assert reading.languages == ("en",)
    assert reading.exclusions == ("children",)


def test_a_question_with_nothing_to_search_for() -> None:
    reading = read_question("find papers since 2020", TODAY)
    assert reading.concepts == ()
    assert reading.pico is None


def test_concept_readings_are_clean() -> None:
    concept = ConceptReading.of("stroke", ["CVA", " cva ", "", "cerebrovascular  accident"])
    assert concept.synonyms == ("CVA", "cerebrovascular accident")
    assert PicoReading(outcome="mortality").present() == {"outcome": "mortality"}


def test_a_stream_purpose_s_names_and_topics() -> None:
    purpose = "Palatin Technologies melanocortin agonist programs in obesity"
    assert proper_names(purpose) == ["Palatin Technologies"]
    assert topic_phrases(purpose) == ["melanocortin agonist", "obesity"]
    assert key_phrases(purpose) == ["Palatin Technologies", "melanocortin agonist", "obesity"]


def test_the_public_names() -> None:
    """What the package exports (an addition is deliberate; a removal breaks callers)."""
    assert set(understanding.__all__) >= {
        "read_question",
        "read_slots",
        "find_dates",
        "date_phrases",
        "stop_words",
        "content_words",
        "key_phrases",
        "proper_names",
    }
    assert all(hasattr(understanding, name) for name in understanding.__all__)
