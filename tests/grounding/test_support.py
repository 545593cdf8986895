"""The offline support score: a record that addresses a sentence scores above one that
does not, by its words and, with an embedder, by meaning."""

from __future__ import annotations

from scholarstream.grounding import SupportScorer
from scholarstream.grounding.core import record_sentences
from scholarstream.papers import Paper
from tests.helpers import ConceptEmbedder

# Words that mean the same to this test's "model".
SYNONYMS = [{"heart", "cardiac", "myocardial"}, {"death", "mortality", "died"}, {"drug", "statin"}]


TRIAL = Paper(
    title="Statins after myocardial infarction",
    abstract="BACKGROUND: Patients were followed for five years. RESULTS: Cardiac mortality "
    "fell by a third with atorvastatin. Muscle pain was rare.",
)
UNRELATED = Paper(title="Sleep in shift workers", abstract="Night shifts shortened sleep.")


def test_a_record_that_addresses_the_sentence_scores_higher_and_is_quoted() -> None:
    sentence = "Atorvastatin reduced cardiac mortality after infarction."
    on_topic, off_topic = SupportScorer().score([(sentence, TRIAL), (sentence, UNRELATED)])
    assert on_topic.score > 0.6 > off_topic.score
    assert on_topic.quote == "Cardiac mortality fell by a third with atorvastatin."
    assert on_topic.similarity is None


def test_structured_abstract_headings_are_not_part_of_the_quote() -> None:
    assert record_sentences(TRIAL)[1] == "Patients were followed for five years."


def test_meaning_credits_a_paraphrase_that_shares_no_words() -> None:
    sentence = "The drug cut heart deaths."
    words_only = SupportScorer().score([(sentence, TRIAL)])[0]
    with_meaning = SupportScorer(ConceptEmbedder(SYNONYMS)).score([(sentence, TRIAL)])[0]
    assert words_only.score < 0.2
    assert with_meaning.score > words_only.score + 0.3
    assert with_meaning.similarity is not None and with_meaning.similarity > 0.6


def test_a_record_without_abstract_is_scored_on_its_title() -> None:
    titled = Paper(title="Atorvastatin and cardiac mortality")
    score = SupportScorer().score([("Atorvastatin lowered cardiac mortality.", titled)])[0]
    assert score.quote == "Atorvastatin and cardiac mortality"
    assert score.score > 0.6
