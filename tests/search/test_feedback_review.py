"""Feedback never narrows beyond what the user said (issue 23): each change a new strategy
makes is listed with the words of the feedback it answers, a change with no words behind
it is not made, and no change leaves out a paper the user marked relevant."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.search import (
    Checkpoint,
    Decision,
    DecisionAction,
    ResultPayload,
    SearchOptions,
    SearchServices,
    SearchStrategy,
    SearchWorkflow,
    StrategyPayload,
    UserFeedback,
)
from scholarstream.search.core import ScoredPaper, SourceQuery
from scholarstream.search.query import read_feedback, review_edit, review_strategy
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.search.world import QUESTION, LiteratureWorld

SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
APPROVE = Decision(action=DecisionAction.APPROVE)
Answer = Decision | Callable[[Checkpoint], Decision]


class ScriptedUser:
    def __init__(self, script: list[Answer]) -> None:
        self.script = script
        self.seen: list[Checkpoint] = []

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        self.seen.append(checkpoint)
        answer = self.script.pop(0)
        return answer(checkpoint) if callable(answer) else answer


def strategy_of(checkpoint: Checkpoint) -> StrategyPayload:
    assert isinstance(checkpoint.payload, StrategyPayload)
    return checkpoint.payload


def results_of(checkpoint: Checkpoint) -> ResultPayload:
    assert isinstance(checkpoint.payload, ResultPayload)
    return checkpoint.payload


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(settings, source_transport=LiteratureWorld().transport())
    yield runtime
    await runtime.close()


def workflow_for(runtime: Runtime, user: ScriptedUser) -> SearchWorkflow:
    return SearchWorkflow.from_config(
        SearchServices(
            settings=runtime.settings.search,
            sources=runtime.sources,
            library=runtime.library,
            llm=runtime.llm,
            database=runtime.database,
        ),
        uuid.uuid4(),
        user,
        5,
        options=SearchOptions(sources=SOURCES, offline=True),
    )


def pubmed(strategy: SearchStrategy) -> str:
    query = strategy.query_for("pubmed")
    assert query is not None
    return query.query


# --- through the workflow, with the offline builder ----------------------------------------


async def test_only_human_studies_becomes_a_humans_limit_and_nothing_else(
    runtime: Runtime,
) -> None:
    reject = Decision(action=DecisionAction.REJECT, note="only human studies please")
    user = ScriptedUser([reject, APPROVE, APPROVE])

    await workflow_for(runtime, user).run(QUESTION)

    first, second = strategy_of(user.seen[0]), strategy_of(user.seen[1])
    before, after = first.strategy, second.strategy
    assert pubmed(after) == pubmed(before) + ' NOT ("Animals"[mh] NOT "Humans"[mh])'
    assert (after.date_from, after.date_to) == (before.date_from, before.date_to)
    for source in ("openalex", "semantic_scholar", "arxiv"):
        assert after.query_for(source) == before.query_for(source)
    assert "[ti]" not in pubmed(after) and "[pt]" not in pubmed(after)
    assert [(c.kind, c.phrase, c.sources) for c in second.changes] == [
        ("humans", "only human studies", ["pubmed"])
    ]
    assert 'you said: "only human studies"' in after.rationale
    assert "openalex, semantic_scholar, arxiv cannot limit by species" in after.rationale


# --- any builder's strategy, checked against the feedback ----------------------------------


PREVIOUS = SearchStrategy(
    queries=[
        SourceQuery(
            source="pubmed",
            query='("aspirin"[tiab] OR "Aspirin"[MeSH]) AND ("stroke"[tiab] OR "Stroke"[MeSH])',
        ),
        SourceQuery(source="openalex", query="aspirin AND stroke"),
    ],
    date_from=None,
)
# What a model wrote for "only human studies please": a start date, a study-type limit, a
# title requirement and a language filter nobody asked for.
MODEL_ANSWER = SearchStrategy(
    queries=[
        SourceQuery(
            source="pubmed",
            query='("aspirin"[ti] OR "Aspirin"[majr]) AND ("stroke"[tiab] OR "Stroke"[MeSH]) '
            'AND ("Randomized Controlled Trial"[pt]) AND "Humans"[mh]',
        ),
        SourceQuery(source="openalex", query="aspirin AND stroke", filters={"language": "en"}),
    ],
    date_from=dt.date(2015, 1, 1),
)


def scored(paper: Paper) -> ScoredPaper:
    return ScoredPaper(id=paper.title[:8], record=paper, score=0.9)


def test_a_model_strategy_keeps_only_what_the_feedback_asks_for() -> None:
    feedback = UserFeedback(free_text_feedback="only human studies please")

    review = review_strategy(
        PREVIOUS, MODEL_ANSWER, read_feedback(feedback), feedback_text=feedback.free_text_feedback
    )

    assert pubmed(review.strategy) == (
        '("aspirin"[tiab] OR "Aspirin"[MeSH]) AND ("stroke"[tiab] OR "Stroke"[MeSH]) '
        'AND "Humans"[mh]'
    )
    assert review.strategy.date_from is None
    assert review.strategy.query_for("openalex") == PREVIOUS.query_for("openalex")
    assert [(c.kind, c.phrase) for c in review.changes] == [("humans", "only human studies")]
    assert sorted(c.kind for c in review.not_made) == [
        "dates",
        "languages",
        "study_types",
        "title",
    ]
    assert all(c.reason == "your feedback does not ask for it" for c in review.not_made)
    assert "Not made: limited to 2015 onwards (your feedback does not ask for it)" in (
        review.strategy.rationale
    )


def test_a_limit_the_feedback_names_is_kept_with_its_words() -> None:
    feedback = UserFeedback(free_text_feedback="Only RCTs, published since 2015")

    review = review_strategy(
        PREVIOUS, MODEL_ANSWER, read_feedback(feedback), feedback_text=feedback.free_text_feedback
    )

    kept = {c.kind: c.phrase for c in review.changes}
    assert kept["study_types"] == "Only RCTs"
    assert kept["dates"] == "since 2015"
    assert review.strategy.date_from == dt.date(2015, 1, 1)
    assert '"Randomized Controlled Trial"[pt]' in pubmed(review.strategy)
    assert {c.kind for c in review.not_made} == {"title", "humans", "languages"}


def test_a_narrowing_that_would_leave_out_a_paper_marked_relevant_is_relaxed() -> None:
    marked = Paper(title="Aspirin and stroke recurrence", year=2009, abstract="aspirin stroke")
    narrower = PREVIOUS.model_copy(update={"date_from": dt.date(2016, 1, 1)})
    feedback = UserFeedback(free_text_feedback="too many results")

    review = review_strategy(
        PREVIOUS,
        narrower,
        read_feedback(feedback),
        feedback_text=feedback.free_text_feedback,
        relevant=[scored(marked)],
    )

    assert review.strategy.date_from is None
    assert review.changes == []
    (relaxed,) = review.not_made
    assert relaxed.kind == "dates" and relaxed.phrase == "too many"
    assert relaxed.reason == (
        "it would leave out 'Aspirin and stroke recurrence', which you marked relevant"
    )


def test_a_narrowing_the_feedback_asks_for_is_made_when_no_marked_paper_is_lost() -> None:
    marked = Paper(title="Aspirin and stroke recurrence", year=2019)
    narrower = PREVIOUS.model_copy(update={"date_from": dt.date(2016, 1, 1)})
    feedback = UserFeedback(direction="narrow")

    review = review_strategy(PREVIOUS, narrower, read_feedback(feedback), relevant=[scored(marked)])

    assert review.strategy.date_from == dt.date(2016, 1, 1)
    assert [(c.kind, c.phrase) for c in review.changes] == [("dates", "narrow")]


def test_an_edited_query_is_kept_but_warned_about() -> None:
    lost = [
        Paper(title="Aspirin in stroke, 2008", year=2008),
        Paper(title="Stroke prevention with aspirin", year=2011),
    ]
    kept = Paper(title="Aspirin after stroke", year=2020)
    edited = PREVIOUS.model_copy(update={"date_from": dt.date(2015, 1, 1)})

    warnings = review_edit(PREVIOUS, edited, [scored(p) for p in [*lost, kept]])

    assert warnings == [
        "Your query would leave out 2 papers you marked relevant: 'Aspirin in stroke, 2008'; "
        "'Stroke prevention with aspirin'."
    ]


def test_the_feedback_reading_keeps_the_users_words() -> None:
    reading = read_feedback(UserFeedback(free_text_feedback="only human studies please"))
    assert reading.humans
    assert reading.direction is None
    assert reading.required == ()
    assert reading.said == {"humans": "only human studies"}

    narrower = read_feedback(UserFeedback(free_text_feedback="too many off-topic papers"))
    assert narrower.direction == "narrow"
    assert narrower.said["direction"] == "too many"
