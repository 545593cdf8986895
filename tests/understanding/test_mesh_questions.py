"""What the question reader gives MeSH mapping to work with: no phrases made of function
words, no generic concepts, no exclusion the question does not ask for."""

from __future__ import annotations

import datetime as dt

import pytest

from scholarstream.understanding import read_question

TODAY = dt.date(2025, 6, 15)


def terms(question: str) -> list[str]:
    return [c.term for c in read_question(question, TODAY).concepts]


def test_excluding_a_diagnosis_is_what_a_test_does_not_a_not() -> None:
    reading = read_question("Ultrasound for excluding the diagnosis of appendicitis", TODAY)
    assert reading.exclusions == ()
    assert [c.term for c in reading.concepts] == ["ultrasound", "appendicitis"]
    assert read_question("D-dimer to exclude pulmonary embolism", TODAY).exclusions == ()


@pytest.mark.parametrize(
    ("question", "excluded"),
    [
        ("statins for primary prevention, excluding children", ("children",)),
        ("deep learning in medical imaging, not in children", ("children",)),
        ("asthma in adults without smoking", ("smoking",)),
    ],
)
def test_an_exclusion_asked_for_in_words(question: str, excluded: tuple[str, ...]) -> None:
    assert read_question(question, TODAY).exclusions == excluded


def test_no_phrase_from_function_words() -> None:
    assert terms("does supplementation reverse it?") == ["supplementation"]
    assert terms("Red flags to screen for vertebral fracture") == [
        "red flags",
        "vertebral fracture",
    ]
    assert terms("laparoscopy following CT for lumbar radiculopathy due to disc herniation") == [
        "laparoscopy",
        "CT",
        "lumbar radiculopathy",
        "disc herniation",
    ]


def test_generic_words_are_no_concept_unless_alone() -> None:
    assert terms("Diagnostic accuracy of the MMSE for the detection of dementia in people") == [
        "MMSE",
        "dementia",
    ]
    assert terms("diagnosis") == ["diagnosis"]
    assert terms("other dementias within a community setting") == ["dementias", "community"]


def test_a_shared_head_is_distributed() -> None:
    reading = read_question("laparoscopy in pancreatic and periampullary cancer", TODAY)
    cancer = reading.concepts[-1]
    assert (cancer.term, cancer.synonyms) == ("pancreatic cancer", ("periampullary cancer",))


def test_accented_words_stay_whole() -> None:
    found = " ".join(terms("efficacité de la vaccination antigrippale chez les personnes âgées"))
    assert "âgées" in found and "efficacité" in found
    assert terms("阿司匹林 预防 中风")


def test_an_outcome_stated_with_without_is_no_exclusion() -> None:
    reading = read_question(
        "procalcitonin-guided antibiotic stopping in sepsis without increasing mortality",
        TODAY,
    )
    assert reading.exclusions == ()
    assert read_question("asthma in adults without smoking", TODAY).exclusions == ("smoking",)
