"""Offline relevance by words and meaning (``HybridRelevanceScorer``) with a test embedding
model: a paraphrase that shares no word with the question ranks above an unrelated paper and
its reason says why; the scale is fixed, so a batch of unrelated papers stays low; words still
count and exclusions still cost; a model that fails leaves the scores by words alone; and a
search run's offline scorer uses the library's embedding model when semantic ranking is on."""

from __future__ import annotations

import logging
import uuid

import pytest

from scholarstream.papers import Paper, Record, paper_key
from scholarstream.runtime import Runtime
from scholarstream.search import (
    SearchOptions,
    SearchServices,
    build_skills,
    library_embedder,
    offline_scorer,
)
from scholarstream.search.core import Concept, LabelledPaper, ParsedIntent
from scholarstream.search.scoring import (
    MEANING_NOTE,
    HybridRelevanceScorer,
    LexicalRelevanceScorer,
    LLMRelevanceScorer,
    MeaningScale,
    feedback_probabilities,
    lexical_relevance,
)
from scholarstream.settings import Settings
from tests.helpers import BrokenEmbedder, ConceptEmbedder, RecordingEmbedder, make_runtime

CONCEPTS = (
    ("heart", "attack", "myocardial", "infarction", "coronary"),
    ("soil", "bacteria", "microbiome", "meadow"),
    ("aspirin", "acetylsalicylic"),
)

INTENT = ParsedIntent(
    question="Does aspirin prevent a heart attack?",
    topic="aspirin for heart attack prevention",
    concepts=[Concept(term="aspirin"), Concept(term="heart attack")],
)

WORDS = Paper(
    title="Aspirin and heart attack in older adults",
    abstract="Daily aspirin lowered the rate of a first heart attack.",
    record_id="words",
)
PARAPHRASE = Paper(
    title="Acetylsalicylic acid after myocardial infarction",
    abstract="Fewer coronary events in the treated group.",
    record_id="paraphrase",
)
UNRELATED = Paper(
    title="Soil bacteria of alpine meadows",
    abstract="We sequenced the microbiome of meadow soils at three altitudes.",
    record_id="unrelated",
)


def hybrid() -> HybridRelevanceScorer:
    return HybridRelevanceScorer(ConceptEmbedder(CONCEPTS))


async def test_a_paraphrase_ranks_above_an_unrelated_paper_and_says_why() -> None:
    papers: list[Record] = [UNRELATED, PARAPHRASE]
    by_words = await LexicalRelevanceScorer().relevance(papers, INTENT)
    assert by_words[0].score == by_words[1].score == 0  # no word of the question in either

    scored = await hybrid().score(papers, INTENT)

    assert [p.record.title for p in scored] == [PARAPHRASE.title, UNRELATED.title]
    assert scored[0].score > scored[1].score
    reasons = [p.reason or "" for p in scored]
    assert MEANING_NOTE in reasons[0] and MEANING_NOTE not in reasons[1]
    assert reasons[0].startswith("Title and abstract do not mention")


async def test_words_still_count_most_for_the_paper_that_names_every_concept() -> None:
    scored = await hybrid().score([UNRELATED, PARAPHRASE, WORDS], INTENT)
    assert [p.record.title for p in scored] == [WORDS.title, PARAPHRASE.title, UNRELATED.title]
    assert "both concepts" in (scored[0].reason or "")


async def test_the_scale_is_fixed_so_a_batch_of_unrelated_papers_stays_low() -> None:
    alone = await hybrid().relevance([UNRELATED], INTENT)
    among = await hybrid().relevance([UNRELATED, WORDS, PARAPHRASE], INTENT)
    assert alone[0].score < 0.1 and not alone[0].by_meaning
    assert alone[0].score == pytest.approx(among[0].score)
    scale = MeaningScale()
    assert scale(scale.unrelated) == 0 and scale(scale.related) == 1 and scale(1.0) == 1


async def test_an_excluded_term_still_costs_half() -> None:
    excluding = INTENT.model_copy(update={"exclude_terms": ["coronary"]})
    plain = await hybrid().relevance([PARAPHRASE], INTENT)
    penalised = await hybrid().relevance([PARAPHRASE], excluding)
    assert penalised[0].score == pytest.approx(plain[0].score / 2)
    assert penalised[0].reason.endswith("but mentions the excluded term 'coronary'.")


async def test_a_model_that_fails_leaves_the_scores_by_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    papers: list[Record] = [UNRELATED, PARAPHRASE, WORDS]
    with caplog.at_level(logging.ERROR):
        scored = await HybridRelevanceScorer(BrokenEmbedder(CONCEPTS)).relevance(papers, INTENT)
    assert scored == lexical_relevance(papers, INTENT)
    assert "scoring relevance by words alone" in caplog.text


def test_the_offline_scorer_is_by_words_without_an_embedding_model() -> None:
    assert isinstance(offline_scorer(None), LexicalRelevanceScorer)
    assert isinstance(offline_scorer(ConceptEmbedder(CONCEPTS)), HybridRelevanceScorer)


def services(runtime: Runtime) -> SearchServices:
    return SearchServices(
        settings=runtime.settings.search,
        sources=runtime.sources,
        library=runtime.library,
        llm=runtime.llm,
        database=runtime.database,
    )


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_search_scores_by_meaning_when_semantic_ranking_is_on(
    settings: Settings, enabled: bool
) -> None:
    semantic = settings.model_copy(
        update={"semantic": settings.semantic.model_copy(update={"enabled": enabled})}
    )
    runtime = make_runtime(semantic, embedder=ConceptEmbedder(CONCEPTS))
    try:
        assert (library_embedder(runtime.library) is not None) is enabled
        options = SearchOptions(sources=["library"])
        offline = build_skills(services(runtime), uuid.uuid4(), options, offline=True)[4]
        assert isinstance(offline, HybridRelevanceScorer) is enabled
        assert isinstance(offline, LexicalRelevanceScorer) is not enabled
        # With a model, what the model cannot judge is scored the same way.
        with_model = build_skills(services(runtime), uuid.uuid4(), options, offline=False)[4]
        assert isinstance(with_model, LLMRelevanceScorer)
        assert isinstance(with_model.fallback, HybridRelevanceScorer) is enabled
        # A caller that fuses meaning in itself asks for words alone.
        words = build_skills(
            services(runtime), uuid.uuid4(), options, offline=True, by_meaning=False
        )[4]
        assert isinstance(words, LexicalRelevanceScorer)
    finally:
        await runtime.close()


SOIL = Paper(
    title="Bacteria in meadow soils after drought",
    abstract="Microbiome shifts in dry meadows.",
    record_id="soil",
)
JUDGED = [
    LabelledPaper(id=paper_key(WORDS), record=WORDS, relevant=True),
    LabelledPaper(id=paper_key(UNRELATED), record=UNRELATED, relevant=False),
]


async def test_the_feedback_model_reads_the_titles_meaning_with_the_scorers_model() -> None:
    candidates: list[Record] = [PARAPHRASE, SOIL]
    by_words = await feedback_probabilities(candidates, JUDGED)
    recording = RecordingEmbedder(CONCEPTS)
    by_meaning = await feedback_probabilities(candidates, JUDGED, embed=recording.embed_documents)
    assert by_words is not None and by_meaning is not None
    # The paraphrase shares no word with the paper marked relevant, only its meaning.
    assert by_meaning[0] > by_words[0]
    assert by_meaning[0] > by_meaning[1]

    # The hybrid scorer hands its model to the feedback model: the judged papers' titles
    # are embedded, though only the candidates are scored for relevance.
    model = RecordingEmbedder(CONCEPTS)
    scored = await HybridRelevanceScorer(model).score(candidates, INTENT, labelled=JUDGED)
    assert WORDS.title in model.texts
    assert scored[0].record == PARAPHRASE


async def test_a_model_that_fails_leaves_the_feedback_by_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    candidates: list[Record] = [PARAPHRASE, SOIL]
    with caplog.at_level(logging.ERROR):
        broken = await feedback_probabilities(
            candidates, JUDGED, embed=BrokenEmbedder(CONCEPTS).embed_documents
        )
    assert broken == await feedback_probabilities(candidates, JUDGED)
    assert "ranking by words alone" in caplog.text
