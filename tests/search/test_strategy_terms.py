"""The terms a strategy searches: no concept of generic words or bare numbers, no
two-letter abbreviation the question did not use, abbreviations inside a phrase spelled
out, and a phrase that ends with what is measured mapped by its subject too."""

from __future__ import annotations

import datetime as dt

from scholarstream.mesh import MeshVocabulary, map_concept
from scholarstream.search.core import QueryBuilderInput
from scholarstream.search.intent import RuleIntentParser
from scholarstream.search.query import RuleQueryBuilder
from scholarstream.understanding import read_question

TODAY = dt.date(2026, 11, 27)


def _terms(question: str) -> list[tuple[str, list[str]]]:
    return [(c.term, list(c.synonyms)) for c in read_question(question, TODAY).concepts]


def test_generic_words_and_numbers_are_no_concepts() -> None:
    terms = [term for term, _ in _terms("risk of preeclampsia in women over 35")]
    assert "risk" not in terms and "35" not in terms
    assert "preeclampsia" in terms


def test_a_two_letter_abbreviation_is_searched_only_when_the_question_uses_it() -> None:
    synonyms = dict(_terms("SGLT2 inhibitors in heart failure"))["heart failure"]
    assert "HF" not in synonyms and "cardiac failure" in synonyms


def test_an_abbreviation_inside_a_phrase_is_spelled_out() -> None:
    (term, synonyms), *_ = _terms("COPD exacerbations in primary care")
    assert term == "COPD exacerbations"
    assert "chronic obstructive pulmonary disease exacerbations" in synonyms


def test_a_phrase_ending_with_what_is_measured_maps_to_its_subject() -> None:
    headings = map_concept(MeshVocabulary.load(), "dengue vaccine effectiveness").headings
    assert "Dengue Vaccines" in headings


def test_a_drug_misspelt_by_one_slip_is_searched_as_meant() -> None:
    mesh = MeshVocabulary.load()
    slips = ["metfromin", "ibuprofin", "amoxicilin", "insullin"]
    assert [mesh.drug_spelled(w) for w in slips] == [
        "metformin",
        "ibuprofen",
        "amoxicillin",
        "insulin",
    ]
    # Real words a letter away from a drug, and other forms of a drug's name, stay.
    assert [mesh.drug_spelled(w) for w in ["compare", "separate", "senolytic", "arresting"]] == [
        None
    ] * 4
    assert "metformin" in [term for term, _ in _terms("metfromin vs insulin in pregnancy")]


def _pubmed(question: str) -> str:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=MeshVocabulary.load(), today=TODAY)
    intent = RuleIntentParser(today=TODAY).parse_now(question)
    strategy = builder.build_now(QueryBuilderInput(intent=intent))
    query = strategy.query_for("pubmed")
    assert query is not None
    return query.query


def test_covid_vaccine_is_every_covid_vaccine_not_one_brand() -> None:
    query = _pubmed("covid vaccine myocarditis in young men")
    assert '"COVID-19 Vaccines"[MeSH]' in query and "ChAdOx1" not in query
    assert '"Young Adult"[MeSH]' in query and '"Male"[MeSH]' in query


def test_everyday_words_for_people_and_common_abbreviations_reach_their_headings() -> None:
    assert '"Child"[MeSH]' in _pubmed("screen time in kids")
    assert '"Heart Failure, Diastolic"[MeSH]' in _pubmed("HFpEF and SGLT2 inhibitors")
    assert '"Receptors, Chimeric Antigen"[MeSH]' in _pubmed("CAR-T for lupus")
    assert '"Shift Work Schedule"[MeSH]' in _pubmed("sleep in shift workers")
