"""The RelevanceScorer skill: offline (BM25 + concept coverage), with a scripted model
(pydantic-ai FunctionModel), and the relevance-feedback model trained on the user's
judgements -- re-ranking checked on a real screening set (Cohen 2006, NSAIDs review)."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Identifiers, Intervention, Paper, Record, Trial, paper_key
from scholarstream.search import ModelSkillLLM
from scholarstream.search.core import Concept, LabelledPaper, ParsedIntent, ScoredPaper
from scholarstream.search.scoring import (
    FeedbackModel,
    LexicalRelevanceScorer,
    LLMRelevanceScorer,
    ScoreCache,
    feedback_probabilities,
    record_text,
)
from tests.conftest import SHARED_DATA

NSAIDS_CSV = SHARED_DATA / "screening" / "Cohen_2006" / "NSAIDS.csv"

INTENT = ParsedIntent(
    question="Does sumatriptan relieve migraine in adolescents?",
    topic="sumatriptan for migraine in adolescents",
    concepts=[
        Concept(term="sumatriptan", synonyms=["Imitrex"]),
        Concept(term="migraine"),
        Concept(term="adolescents", synonyms=["teenagers"]),
    ],
)

ON_TOPIC = Paper(
    ids=Identifiers(pmid="1001"),
    title="Nasal sumatriptan for acute migraine in adolescents",
    abstract="A randomised trial of intranasal sumatriptan in teenagers with migraine attacks.",
)
ONE_WORD = Paper(
    ids=Identifiers(pmid="1002"),
    title="Migraine, migraine, migraine: the burden of migraine",
    abstract="Migraine is common. Migraine costs. Migraine disables. Migraine everywhere.",
)
OFF_TOPIC = Paper(
    ids=Identifiers(pmid="1003"),
    title="Soil bacteria of alpine meadows",
    abstract="We sequenced the microbiome of meadow soils at three altitudes.",
)
TRIAL = Trial(
    ids=Identifiers(nct_id="NCT01234567"),
    title="Sumatriptan Nasal Spray in Adolescent Migraine",
    official_title="A Phase 3 Study of Sumatriptan Nasal Spray in Adolescents With Migraine",
    summary="Tests whether sumatriptan nasal spray relieves migraine pain within two hours.",
    conditions=["Migraine"],
    interventions=[Intervention(name="Sumatriptan nasal spray", type="DRUG")],
)


def assert_ranked(papers: Sequence[ScoredPaper]) -> None:
    assert all(0.0 <= p.score <= 1.0 for p in papers)
    unlabelled = [p.score for p in papers if p.label is None]
    assert unlabelled == sorted(unlabelled, reverse=True)
    assert all(p.reason for p in papers)


# --- offline mode ------------------------------------------------------------------------


async def test_lexical_ranks_the_paper_matching_every_concept_first() -> None:
    scored = await LexicalRelevanceScorer().score([OFF_TOPIC, ONE_WORD, ON_TOPIC], INTENT)

    assert [p.id for p in scored] == ["pmid:1001", "pmid:1002", "pmid:1003"]
    assert_ranked(scored)
    top, repeated, off = scored
    assert top.reason == (
        "Title and abstract mention all 3 concepts: sumatriptan, migraine, adolescents."
    )
    assert repeated.reason == "Title and abstract mention 1 of 3 concepts: migraine."
    assert off.reason == "Title and abstract do not mention any of the 3 concepts."
    assert top.score > repeated.score > off.score
    assert off.score == 0.0


async def test_synonyms_count_for_their_concept_and_exclusions_cost() -> None:
    intent = INTENT.model_copy(update={"exclude_terms": ["nasal"]})
    teenagers = Paper(title="Imitrex in teenagers", abstract="Imitrex relieved migraine.")

    scored = await LexicalRelevanceScorer().score([teenagers, ON_TOPIC], intent)

    by_title = {p.record.title: p for p in scored}
    assert by_title["Imitrex in teenagers"].reason == (
        "Title and abstract mention all 3 concepts: sumatriptan, migraine, adolescents."
    )
    penalised = by_title[ON_TOPIC.title]
    assert penalised.reason is not None
    assert penalised.reason.endswith("but mentions the excluded term 'nasal'.")
    assert scored[0].record.title == "Imitrex in teenagers"


async def test_without_concepts_the_topic_words_are_counted() -> None:
    intent = ParsedIntent(question="migraine in adolescents", topic="migraine in adolescents")

    scored = await LexicalRelevanceScorer().score([ONE_WORD, ON_TOPIC], intent)

    assert scored[0].id == "pmid:1001"
    assert scored[0].reason == (
        "Title and abstract mention both topic words: migraine, adolescents."
    )


async def test_a_trial_is_scored_from_its_registry_fields() -> None:
    assert "Sumatriptan nasal spray" in record_text(TRIAL)
    assert "Migraine" in record_text(TRIAL).splitlines()

    scored = await LexicalRelevanceScorer().score([OFF_TOPIC, TRIAL], INTENT)

    assert scored[0].id == "nct:NCT01234567"
    assert scored[0].reason == (
        "The trial record mentions all 3 concepts: sumatriptan, migraine, adolescents."
    )
    assert scored[0].sources == []


async def test_no_records_no_papers() -> None:
    assert await LexicalRelevanceScorer().score([], INTENT) == []


async def test_texts_of_stop_words_only_score_zero() -> None:
    intent = ParsedIntent(question="the", topic="the")

    scored = await LexicalRelevanceScorer().score([Paper(title="The"), Paper(title="Of")], intent)

    assert [p.score for p in scored] == [0.0, 0.0]
    assert scored[0].reason == "The title mentions none of the words of the topic."


# --- relevance feedback --------------------------------------------------------------------


def nsaids_papers() -> tuple[list[Paper], list[Paper]]:
    """(included, excluded) papers of the NSAIDs review that have a title and abstract."""
    included: list[Paper] = []
    excluded: list[Paper] = []
    with NSAIDS_CSV.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if not row["title"].strip() or not row["abstract"].strip():
                continue
            paper = Paper(
                ids=Identifiers(pmid=row["pubmedID"]), title=row["title"], abstract=row["abstract"]
            )
            (included if row["label_included"] == "1" else excluded).append(paper)
    return included, excluded


NSAIDS_INTENT = ParsedIntent(
    question="What do nonsteroidal anti-inflammatory drugs do?",
    topic="nonsteroidal anti-inflammatory drugs",
    concepts=[Concept(term="NSAID", synonyms=["nonsteroidal anti-inflammatory"])],
)


def mean_rank(scored: Sequence[ScoredPaper], wanted: set[str]) -> float:
    ranks = [i for i, p in enumerate(scored) if p.id in wanted]
    return sum(ranks) / len(ranks)


async def test_judgements_rerank_the_rest_toward_the_included_papers() -> None:
    included, excluded = nsaids_papers()
    candidates: list[Record] = [*included[:8], *excluded[:24]]
    labelled = [LabelledPaper(id=paper_key(p), record=p, relevant=True) for p in included[8:14]]
    labelled += [LabelledPaper(id=paper_key(p), record=p, relevant=False) for p in excluded[24:36]]
    wanted = {paper_key(p) for p in included[:8]}
    scorer = LexicalRelevanceScorer()

    before = await scorer.score(candidates, NSAIDS_INTENT)
    after = await scorer.score(candidates, NSAIDS_INTENT, labelled=labelled)

    assert_ranked(after)
    assert mean_rank(after, wanted) < mean_rank(before, wanted) - 3
    assert len(wanted & {p.id for p in after[:8]}) > len(wanted & {p.id for p in before[:8]})
    assert any("similar to papers you marked relevant" in (p.reason or "") for p in after)
    assert not any("marked" in (p.reason or "") for p in before)


async def test_one_kind_of_judgement_is_not_enough_to_learn() -> None:
    labelled = [LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=True)]
    records: list[Record] = [ONE_WORD, OFF_TOPIC]

    with_label = await LexicalRelevanceScorer().score(records, INTENT, labelled=labelled)
    without = await LexicalRelevanceScorer().score(records, INTENT)

    assert [(p.id, p.score, p.reason) for p in with_label] == [
        (p.id, p.score, p.reason) for p in without
    ]
    assert not FeedbackModel.can_learn([True, True])
    with pytest.raises(InvalidInputError):
        FeedbackModel(["a text", "another"]).fit({0: True, 1: True})


def test_the_feedback_model_learns_from_indices() -> None:
    texts = [
        "sumatriptan relieves migraine",
        "soil bacteria of meadows",
        "zolmitriptan for migraine attacks",
        "bacteria in alpine soil samples",
    ]
    model = FeedbackModel(texts).fit({0: True, 1: False})

    probabilities = model.probabilities([2, 3])
    assert probabilities[0] > 0.5 > probabilities[1]
    assert model.rank([3, 2]) == [2, 3]


def test_the_feedback_model_answers_an_empty_question_with_nothing() -> None:
    texts = ["sumatriptan relieves migraine", "soil bacteria of meadows"]
    model = FeedbackModel(texts).fit({0: True, 1: False})

    assert model.probabilities([]).shape == (0,)
    assert model.evidence([]).shape == (0,)
    assert model.rank([]) == []


async def test_no_candidates_with_both_kinds_of_judgement_score_nothing() -> None:
    # An iteration that found nothing after the user judged papers of both kinds.
    labelled = [
        LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=True),
        LabelledPaper(id=paper_key(OFF_TOPIC), record=OFF_TOPIC, relevant=False),
    ]
    assert await feedback_probabilities([], labelled) == []
    assert await LexicalRelevanceScorer().score([], INTENT, labelled=labelled) == []


async def test_papers_the_user_judged_keep_their_judgement() -> None:
    # The user disagrees with the lexical score both ways.
    labelled = [
        LabelledPaper(id=paper_key(OFF_TOPIC), record=OFF_TOPIC, relevant=True),
        LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=False),
    ]

    scored = await LexicalRelevanceScorer().score(
        [ON_TOPIC, ONE_WORD, OFF_TOPIC], INTENT, labelled=labelled
    )

    assert [p.id for p in scored] == ["pmid:1003", "pmid:1002", "pmid:1001"]
    first, middle, last = scored
    assert (first.label, first.score, first.reason) == (
        "relevant",
        1.0,
        "You marked this paper relevant.",
    )
    assert (last.label, last.score) == ("irrelevant", 0.0)
    assert middle.label is None


async def test_a_later_judgement_replaces_an_earlier_one() -> None:
    labelled = [
        LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=False),
        LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=True),
    ]

    scored = await LexicalRelevanceScorer().score([ON_TOPIC], INTENT, labelled=labelled)

    assert scored[0].label == "relevant"


# --- model mode ------------------------------------------------------------------------------

Respond = Callable[[list[str]], list[dict[str, Any]]]
_NUMBERED = re.compile(r"^\[(\d+)\]", re.MULTILINE)


def prompt_of(messages: list[ModelMessage]) -> str:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return " ".join(str(getattr(part, "content", "")) for part in request.parts)


class ScriptedModel:
    """A FunctionModel answering with ``respond(the text of each numbered paper)``."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.prompts: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = prompt_of(messages)
        self.prompts.append(prompt)
        papers = prompt.split("Papers:", 1)[1]
        texts = [chunk.strip() for chunk in _NUMBERED.split(papers)[2::2]]
        payload = {"scores": self.respond(texts)}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, payload)])

    def llm(self) -> ModelSkillLLM:
        return ModelSkillLLM(FunctionModel(self))


def by_keyword(texts: list[str]) -> list[dict[str, Any]]:
    """Scores a paper by whether its text mentions sumatriptan."""
    return [
        {
            "paper": n,
            "score": 0.9 if "sumatriptan" in text.lower() else 0.1,
            "reason": "It is about sumatriptan." if "sumatriptan" in text.lower() else "Off topic.",
        }
        for n, text in enumerate(texts, start=1)
    ]


def numbered_papers(count: int) -> list[Record]:
    return [
        Paper(
            ids=Identifiers(pmid=str(2000 + i)),
            title=f"Paper {i} on {'sumatriptan' if i % 2 else 'soil'}",
            abstract="Sumatriptan and migraine." if i % 2 else "Bacteria.",
        )
        for i in range(count)
    ]


async def test_llm_scores_in_batches_and_sorts() -> None:
    model = ScriptedModel(by_keyword)
    scorer = LLMRelevanceScorer(model.llm(), batch_size=4)

    scored = await scorer.score(numbered_papers(10), INTENT)

    assert len(model.prompts) == 3  # 4 + 4 + 2
    assert_ranked(scored)
    assert [p.score for p in scored] == [0.9] * 5 + [0.1] * 5
    assert scored[0].reason == "It is about sumatriptan."
    # Ties are broken by id, so the order does not depend on the order records came in.
    assert [p.id for p in scored[:5]] == sorted(p.id for p in scored[:5])
    assert "Research question: Does sumatriptan relieve migraine" in model.prompts[0]
    assert "Concept: sumatriptan (also: Imitrex)" in model.prompts[0]


async def test_the_cache_spares_a_second_call_for_the_same_papers() -> None:
    model = ScriptedModel(by_keyword)
    cache = ScoreCache()
    papers = numbered_papers(6)

    first = await LLMRelevanceScorer(model.llm(), batch_size=10, cache=cache).score(papers, INTENT)
    calls = len(model.prompts)
    again = await LLMRelevanceScorer(model.llm(), cache=cache).score(papers[::-1], INTENT)

    assert calls == 1
    assert len(model.prompts) == calls
    assert [(p.id, p.score) for p in again] == [(p.id, p.score) for p in first]
    other = INTENT.model_copy(update={"topic": "zolmitriptan"})
    await LLMRelevanceScorer(model.llm(), cache=cache).score(papers, other)
    assert len(model.prompts) == calls + 1  # another question is judged afresh


async def test_unknown_numbers_are_ignored_and_scores_clamped() -> None:
    def respond(titles: list[str]) -> list[dict[str, Any]]:
        return [
            {"paper": 99, "score": 1.0, "reason": "A paper that does not exist."},
            {"paper": 1, "score": 1.7, "reason": "Exactly on topic."},
            {"paper": 2, "score": -0.3, "reason": "Unrelated."},
            {"paper": 1, "score": 0.0, "reason": "A second answer for paper 1."},
        ]

    model = ScriptedModel(respond)
    scored = await LLMRelevanceScorer(model.llm()).score([ON_TOPIC, OFF_TOPIC], INTENT)

    assert [(p.id, p.score, p.reason) for p in scored] == [
        ("pmid:1001", 1.0, "Exactly on topic."),
        ("pmid:1003", 0.0, "Unrelated."),
    ]
    assert len(model.prompts) == 1


async def test_papers_the_model_skips_are_asked_again_then_scored_offline() -> None:
    def first_only(titles: list[str]) -> list[dict[str, Any]]:
        return [{"paper": 1, "score": 0.8, "reason": "Judged."}]

    model = ScriptedModel(first_only)
    scored = await LLMRelevanceScorer(model.llm()).score([OFF_TOPIC, ON_TOPIC, ONE_WORD], INTENT)

    # One call for the batch, one more for the two papers it skipped (of which the
    # model again answers only the first).
    assert len(model.prompts) == 2
    reasons = {p.id: p.reason for p in scored}
    assert reasons["pmid:1003"] == "Judged."
    assert reasons["pmid:1001"] == "Judged."
    assert reasons["pmid:1002"] == (
        "Scored offline because the model gave no score; title and abstract mention 1 of 3 "
        "concepts: migraine."
    )


def failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise UnexpectedModelBehavior("the provider returned garbage")


def unstructured(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("I think they are all quite relevant!")])


@pytest.mark.parametrize("respond", [failing, unstructured], ids=["raises", "invalid output"])
async def test_a_failed_batch_is_scored_offline(
    respond: Callable[[list[ModelMessage], AgentInfo], ModelResponse],
) -> None:
    llm = ModelSkillLLM(FunctionModel(respond))

    scored = await LLMRelevanceScorer(llm).score([OFF_TOPIC, ONE_WORD, ON_TOPIC], INTENT)

    offline = await LexicalRelevanceScorer().score([OFF_TOPIC, ONE_WORD, ON_TOPIC], INTENT)
    assert [(p.id, p.score) for p in scored] == [(p.id, p.score) for p in offline]
    assert scored[0].reason == (
        "Scored offline because the model call failed; title and abstract mention all 3 "
        "concepts: sumatriptan, migraine, adolescents."
    )


async def test_only_the_failed_batch_falls_back() -> None:
    def respond(titles: list[str]) -> list[dict[str, Any]]:
        if any("soil" in title for title in titles):
            raise UnexpectedModelBehavior("this batch failed")
        return by_keyword(titles)

    model = ScriptedModel(respond)
    papers = [ON_TOPIC, OFF_TOPIC]

    scored = await LLMRelevanceScorer(model.llm(), batch_size=1).score(papers, INTENT)

    reasons = {p.id: p.reason or "" for p in scored}
    assert reasons["pmid:1001"] == "It is about sumatriptan."
    assert reasons["pmid:1003"].startswith("Scored offline because the model call failed")


async def test_llm_scorer_blends_feedback_and_does_not_ask_about_judged_papers() -> None:
    model = ScriptedModel(by_keyword)
    labelled = [
        LabelledPaper(id=paper_key(ON_TOPIC), record=ON_TOPIC, relevant=True),
        LabelledPaper(id=paper_key(OFF_TOPIC), record=OFF_TOPIC, relevant=False),
    ]
    similar = Paper(title="Sumatriptan in adolescent migraine", abstract="Nasal sumatriptan.")

    scored = await LLMRelevanceScorer(model.llm()).score(
        [OFF_TOPIC, similar, ON_TOPIC], INTENT, labelled=labelled
    )

    assert [p.label for p in scored] == ["relevant", None, "irrelevant"]
    assert "Soil bacteria" not in model.prompts[0]
    assert "Nasal sumatriptan for acute migraine" not in model.prompts[0]
    assert scored[1].reason == "It is about sumatriptan; similar to papers you marked relevant."


async def test_llm_scores_a_trial() -> None:
    model = ScriptedModel(by_keyword)

    scored = await LLMRelevanceScorer(model.llm()).score([TRIAL], INTENT)

    assert scored[0].id == "nct:NCT01234567"
    assert scored[0].score == 0.9
    assert "[1] (n.d.; trial) Sumatriptan Nasal Spray in Adolescent Migraine" in model.prompts[0]
    assert "Sumatriptan nasal spray" in model.prompts[0]
