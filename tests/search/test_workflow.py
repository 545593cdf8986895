"""SearchWorkflow (seed 003): every row of the Decision Semantics and Edge Cases tables,
run with the real offline skills against recorded source responses."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.errors import InvalidInputError, LLMError
from scholarstream.runtime import Runtime
from scholarstream.search import (
    Checkpoint,
    CheckpointKind,
    Decision,
    DecisionAction,
    LLMIntentParser,
    ModelSkillLLM,
    ParsedIntent,
    ResultPayload,
    SearchOptions,
    SearchServices,
    SearchStrategy,
    SearchWorkflow,
    StrategyPayload,
    UserFeedback,
    WorkflowState,
)
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.search.world import QUESTION, LiteratureWorld

SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
Answer = Decision | Callable[[Checkpoint], Decision]


@dataclass
class ScriptedUser:
    """Answers checkpoints from a script and keeps every checkpoint it was shown."""

    script: list[Answer]
    seen: list[Checkpoint] = field(default_factory=list)

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        self.seen.append(checkpoint)
        if not self.script:
            raise AssertionError(f"unexpected checkpoint {checkpoint.kind}")
        answer = self.script.pop(0)
        return answer(checkpoint) if callable(answer) else answer

    def kinds(self) -> list[CheckpointKind]:
        return [c.kind for c in self.seen]


APPROVE = Decision(action=DecisionAction.APPROVE)


def results_of(checkpoint: Checkpoint) -> ResultPayload:
    assert isinstance(checkpoint.payload, ResultPayload)
    return checkpoint.payload


def strategy_of(checkpoint: Checkpoint) -> StrategyPayload:
    assert isinstance(checkpoint.payload, StrategyPayload)
    return checkpoint.payload


@dataclass
class Harness:
    runtime: Runtime
    world: LiteratureWorld

    def workflow(
        self,
        user: ScriptedUser | None,
        *,
        max_iterations: int = 5,
        strategy_checkpoint: bool = True,
        sources: list[str] | None = None,
    ) -> SearchWorkflow:
        return SearchWorkflow.from_config(
            SearchServices(
                settings=self.runtime.settings.search,
                sources=self.runtime.sources,
                library=self.runtime.library,
                llm=self.runtime.llm,
                database=self.runtime.database,
            ),
            uuid.uuid4(),
            user,
            max_iterations,
            options=SearchOptions(
                sources=sources or SOURCES,
                strategy_checkpoint=strategy_checkpoint,
                offline=True,
            ),
        )


@pytest.fixture
async def make_harness(settings: Settings) -> AsyncIterator[Callable[..., Harness]]:
    runtimes: list[Runtime] = []

    def factory(**world: object) -> Harness:
        literature = LiteratureWorld(**world)  # type: ignore[arg-type]
        runtime = make_runtime(settings, source_transport=literature.transport())
        runtimes.append(runtime)
        return Harness(runtime, literature)

    yield factory
    for runtime in runtimes:
        await runtime.close()


# --- Decision semantics ----------------------------------------------------------------


async def test_strategy_approve_proceeds_with_the_built_strategy(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    user = ScriptedUser([APPROVE, APPROVE])
    collection = await harness.workflow(user).run(QUESTION)

    assert user.kinds() == [CheckpointKind.STRATEGY_CONFIRMATION, CheckpointKind.RESULT_REVIEW]
    built = strategy_of(user.seen[0]).strategy
    assert collection.strategy == built
    assert set(built.sources) == set(SOURCES)
    assert collection.papers, "the recorded sources return papers"
    assert {s.source for s in collection.source_statuses} == set(SOURCES)


async def test_strategy_edit_uses_the_revised_strategy(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()

    def edit(checkpoint: Checkpoint) -> Decision:
        strategy = strategy_of(checkpoint).strategy
        only_pubmed = strategy.model_copy(
            update={"queries": [q for q in strategy.queries if q.source == "pubmed"]}
        )
        revised = only_pubmed.model_dump(mode="json")
        revised["queries"][0]["query"] = '"transformer models"[tiab]'
        return Decision(action=DecisionAction.EDIT, revised_data=revised)

    user = ScriptedUser([edit, APPROVE])
    collection = await harness.workflow(user).run(QUESTION)

    assert collection.strategy is not None
    assert collection.strategy.sources == ["pubmed"]
    esearch = [r for r in harness.world.searched("pubmed") if "esearch" in r.url.path]
    assert esearch and esearch[0].url.params["term"].startswith('"transformer models"[tiab]')
    assert not harness.world.searched("openalex"), "sources edited out are not searched"


async def test_strategy_edit_that_does_not_validate_is_refused(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    user = ScriptedUser(
        [Decision(action=DecisionAction.EDIT, revised_data={"queries": [{"source": "pubmed"}]})]
    )
    with pytest.raises(InvalidInputError, match="strategy is not valid"):
        await harness.workflow(user).run(QUESTION)
    assert not harness.world.requests


async def test_strategy_reject_turns_the_note_into_feedback_and_builds_anew(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    reject = Decision(action=DecisionAction.REJECT, note="only randomized controlled trials")
    user = ScriptedUser([reject, APPROVE, APPROVE])
    workflow = harness.workflow(user)
    await workflow.run(QUESTION)

    first, second = strategy_of(user.seen[0]), strategy_of(user.seen[1])
    assert (first.iteration, second.iteration) == (0, 1)
    assert first.strategy.fingerprint() != second.strategy.fingerprint()
    rejected = workflow.state.iterations[0]
    assert rejected.outcome == "strategy_rejected" and rejected.result_count == 0
    assert rejected.feedback == UserFeedback(free_text_feedback="only randomized controlled trials")
    assert workflow.state.rejected_strategies == [first.strategy]
    assert user.kinds()[2] is CheckpointKind.RESULT_REVIEW


async def test_result_approve_completes_with_the_collection(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    user = ScriptedUser([APPROVE, APPROVE])
    workflow = harness.workflow(user)
    collection = await workflow.run(QUESTION)

    reviewed = results_of(user.seen[1]).collection
    assert [p.id for p in collection.papers] == [p.id for p in reviewed.papers]
    assert workflow.state.is_complete
    assert [i.outcome for i in workflow.state.iterations] == ["approved"]


async def test_result_edit_iterates_with_the_feedback(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    marked: dict[str, list[str]] = {}

    def mark(checkpoint: Checkpoint) -> Decision:
        papers = results_of(checkpoint).collection.papers
        marked["relevant"] = [papers[0].id, papers[2].id]
        marked["irrelevant"] = [papers[-1].id]
        feedback = UserFeedback(
            marked_relevant=marked["relevant"],
            marked_irrelevant=marked["irrelevant"],
            direction="narrow",
        )
        return Decision(action=DecisionAction.EDIT, revised_data=feedback.model_dump())

    user = ScriptedUser([APPROVE, mark, APPROVE, APPROVE])
    workflow = harness.workflow(user)
    collection = await workflow.run(QUESTION)

    assert [c.iteration for c in user.seen] == [0, 0, 1, 1]
    second_review = results_of(user.seen[3])
    assert {p.id for p in second_review.accumulated_papers} == set(marked["relevant"])
    labels = {p.id: p.label for p in collection.papers}
    assert all(labels[pid] == "relevant" for pid in marked["relevant"])
    assert workflow.state.latest_feedback is not None
    assert workflow.state.latest_feedback.direction == "narrow"
    assert {label.id for label in workflow.state.labelled} == {
        *marked["relevant"],
        *marked["irrelevant"],
    }
    assert [i.outcome for i in workflow.state.iterations] == ["iterated", "approved"]


async def test_result_edit_with_feedback_that_does_not_validate_is_refused(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    bad = Decision(
        action=DecisionAction.EDIT,
        revised_data={"marked_relevant": ["a"], "marked_irrelevant": ["a"]},
    )
    user = ScriptedUser([APPROVE, bad])
    with pytest.raises(InvalidInputError, match="feedback is not valid"):
        await harness.workflow(user).run(QUESTION)


async def test_result_reject_iterates_with_the_note_as_feedback(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    reject = Decision(action=DecisionAction.REJECT, note="too many reviews, want primary studies")
    user = ScriptedUser([APPROVE, reject, APPROVE, APPROVE])
    workflow = harness.workflow(user)
    await workflow.run(QUESTION)

    first = workflow.state.iterations[0]
    assert first.outcome == "iterated"
    assert first.feedback == UserFeedback(
        free_text_feedback="too many reviews, want primary studies"
    )
    assert strategy_of(user.seen[2]).iteration == 1
    assert workflow.state.is_complete


# --- Edge cases ------------------------------------------------------------------------


async def test_empty_results_still_reach_the_result_review(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(empty=SOURCES)
    user = ScriptedUser([APPROVE, APPROVE])
    collection = await harness.workflow(user).run(QUESTION)

    review = results_of(user.seen[1]).collection
    assert review.papers == [] and collection.papers == []
    assert all(status.ok for status in review.source_statuses)


async def test_all_sources_failing_is_like_empty_results_with_the_failures_reported(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(failing=SOURCES)
    user = ScriptedUser([APPROVE, APPROVE])
    collection = await harness.workflow(user).run(QUESTION)

    assert user.kinds()[-1] is CheckpointKind.RESULT_REVIEW
    assert collection.papers == []
    assert sorted(collection.stats.sources_failed) == sorted(SOURCES)
    assert {s.error_code for s in collection.source_statuses} == {"source_credentials"}


async def test_one_failed_source_is_reported_and_the_rest_continue(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(failing=["openalex"])
    collection = await harness.workflow(None).run(QUESTION)

    assert collection.stats.sources_failed == ["openalex"]
    assert collection.papers
    assert all("openalex" not in p.sources for p in collection.papers)


async def test_an_intent_model_that_cannot_answer_leaves_the_question_to_the_rules(
    make_harness: Callable[..., Harness],
) -> None:
    # Issue 22: the search no longer fails at "parsing"; the rule parser reads the question.
    def garbage(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("I cannot help with that.")])

    harness = make_harness()
    workflow = harness.workflow(None, strategy_checkpoint=False)
    workflow.intent_parser = LLMIntentParser(
        ModelSkillLLM(FunctionModel(garbage)), fallbacks=workflow.fallbacks
    )
    collection = await workflow.run(QUESTION)
    assert collection.papers
    assert [(f.skill, f.reason) for f in workflow.state.fallbacks] == [
        ("search.intent", "unusable")
    ]


async def test_intent_parser_failure_propagates(make_harness: Callable[..., Harness]) -> None:
    class Broken:
        async def parse(self, user_input: str) -> ParsedIntent:
            raise LLMError("no parser today", hint="Try again.")

    harness = make_harness()
    workflow = harness.workflow(ScriptedUser([]))
    workflow.intent_parser = Broken()
    with pytest.raises(LLMError):
        await workflow.run(QUESTION)
    assert not harness.world.requests
    assert workflow.state.fallbacks == []


async def test_checkpoint_handler_failure_propagates(
    make_harness: Callable[..., Harness],
) -> None:
    def boom(checkpoint: Checkpoint) -> Decision:
        raise RuntimeError("the user closed the terminal")

    harness = make_harness()
    with pytest.raises(RuntimeError, match="closed the terminal"):
        await harness.workflow(ScriptedUser([boom])).run(QUESTION)


async def test_max_iterations_returns_the_last_collection(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    again = Decision(action=DecisionAction.REJECT, note="more please")

    def mark_first(checkpoint: Checkpoint) -> Decision:
        first = results_of(checkpoint).collection.papers[0].id
        feedback = UserFeedback(marked_relevant=[first])
        return Decision(action=DecisionAction.EDIT, revised_data=feedback.model_dump())

    user = ScriptedUser([APPROVE, mark_first, APPROVE, again])
    workflow = harness.workflow(user, max_iterations=2)
    collection = await workflow.run(QUESTION)

    last = results_of(user.seen[-1]).collection
    assert workflow.state.is_complete
    assert len(workflow.state.iterations) == 2
    assert {p.id for p in last.papers} <= {p.id for p in collection.papers}
    # What the user marked relevant earlier is kept.
    assert workflow.state.accumulated_papers
    assert workflow.state.accumulated_papers[0].id in {p.id for p in collection.papers}


async def test_max_iterations_with_every_strategy_rejected_returns_an_empty_collection(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    reject = Decision(action=DecisionAction.REJECT, note="no")
    workflow = harness.workflow(ScriptedUser([reject, reject]), max_iterations=2)
    collection = await workflow.run(QUESTION)

    assert collection.papers == [] and workflow.state.is_complete
    assert not harness.world.requests
    assert len({s.fingerprint() for s in workflow.state.rejected_strategies}) == 2


async def test_no_checkpoint_handler_is_one_automatic_iteration(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    workflow = harness.workflow(None)
    collection = await workflow.run(QUESTION)

    assert collection.papers
    assert [i.outcome for i in workflow.state.iterations] == ["approved"]
    assert workflow.state.is_complete


async def test_disabled_strategy_checkpoint_is_skipped_even_with_a_handler(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    user = ScriptedUser([APPROVE])
    await harness.workflow(user, strategy_checkpoint=False).run(QUESTION)
    assert user.kinds() == [CheckpointKind.RESULT_REVIEW]


async def test_an_empty_question_is_refused_before_anything_runs(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    with pytest.raises(InvalidInputError, match="empty"):
        await harness.workflow(None).run("   ")
    assert not harness.world.requests


async def test_results_are_deduplicated_scored_and_organised(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    collection = await harness.workflow(None).run(QUESTION)

    stats = collection.stats
    assert stats.found == stats.total + stats.duplicates_removed
    scores = [p.score for p in collection.papers]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert all(p.reason for p in collection.papers)
    dimensions = {g.dimension for g in collection.groupings}
    assert {"year", "study_type", "source"} <= dimensions
    ids = [p.id for p in collection.papers]
    assert len(ids) == len(set(ids))
    for grouping in collection.groupings:
        grouped = [pid for g in grouping.groups for pid in g.paper_ids]
        assert set(grouped) <= set(ids)


def test_strategy_fingerprint_ignores_rationale_but_not_queries() -> None:
    base = SearchStrategy.model_validate(
        {"queries": [{"source": "pubmed", "query": "a AND b"}], "rationale": "x"}
    )
    same = base.model_copy(update={"rationale": "y"})
    other = SearchStrategy.model_validate({"queries": [{"source": "pubmed", "query": "a OR b"}]})
    assert base.fingerprint() == same.fingerprint() != other.fingerprint()


def test_added_and_excluded_terms_hold_for_the_rest_of_the_run() -> None:
    strategy = SearchStrategy.model_validate({"queries": [{"source": "pubmed", "query": "a"}]})
    state = WorkflowState()
    state.record_iteration(strategy, 3, UserFeedback(exclude_terms=["rats"], add_terms=["BERT"]))
    state.record_iteration(strategy, 3, UserFeedback(free_text_feedback="narrower please"))
    assert state.latest_feedback is not None
    assert state.latest_feedback.exclude_terms == ["rats"]
    assert state.latest_feedback.add_terms == ["BERT"]
    assert state.latest_feedback.free_text_feedback == "narrower please"
    state.record_iteration(strategy, 3, UserFeedback(add_terms=["rats"]))
    assert state.latest_feedback.exclude_terms == []
    assert state.latest_feedback.add_terms == ["BERT", "rats"]


# --- A later iteration that finds nothing, after the user judged papers ----------------


def _mark_and_then(world: LiteratureWorld, **later: list[str]) -> Callable[[Checkpoint], Decision]:
    """Marks the first paper relevant and the last irrelevant (enough for the feedback
    model to learn), and makes the sources answer as ``later`` says from now on."""

    def mark(checkpoint: Checkpoint) -> Decision:
        papers = results_of(checkpoint).collection.papers
        feedback = UserFeedback(marked_relevant=[papers[0].id], marked_irrelevant=[papers[-1].id])
        for name, sources in later.items():
            setattr(world, name, sources)
        return Decision(action=DecisionAction.EDIT, revised_data=feedback.model_dump())

    return mark


@pytest.mark.parametrize("later", ["empty", "failing"])
async def test_a_later_iteration_that_finds_nothing_keeps_the_labels_and_reaches_review(
    make_harness: Callable[..., Harness], later: str
) -> None:
    harness = make_harness()
    user = ScriptedUser(
        [APPROVE, _mark_and_then(harness.world, **{later: SOURCES}), APPROVE, APPROVE]
    )
    workflow = harness.workflow(user)
    collection = await workflow.run(QUESTION)

    first = results_of(user.seen[1]).collection.papers
    relevant, irrelevant = first[0].id, first[-1].id
    assert user.kinds() == [
        CheckpointKind.STRATEGY_CONFIRMATION,
        CheckpointKind.RESULT_REVIEW,
        CheckpointKind.STRATEGY_CONFIRMATION,
        CheckpointKind.RESULT_REVIEW,
    ]
    second = results_of(user.seen[3])
    assert second.iteration == 1 and second.collection.papers == []
    assert [p.id for p in second.accumulated_papers] == [relevant]
    if later == "failing":
        assert sorted(second.collection.stats.sources_failed) == sorted(SOURCES)
    else:
        assert all(status.ok for status in second.collection.source_statuses)
    # The judgements survive the empty iteration and the approved result keeps them.
    assert {(label.id, label.relevant) for label in workflow.state.labelled} == {
        (relevant, True),
        (irrelevant, False),
    }
    assert [(p.id, p.label) for p in collection.papers] == [(relevant, "relevant")]
    assert [i.outcome for i in workflow.state.iterations] == ["iterated", "approved"]
    assert workflow.state.is_complete


async def test_an_iteration_after_an_empty_one_still_learns_from_the_labels(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()

    def results_again(checkpoint: Checkpoint) -> Decision:
        harness.world.empty = ()
        return Decision(action=DecisionAction.REJECT, note="try again")

    mark = _mark_and_then(harness.world, empty=SOURCES)
    user = ScriptedUser([APPROVE, mark, APPROVE, results_again, APPROVE, APPROVE])
    workflow = harness.workflow(user)
    collection = await workflow.run(QUESTION)

    assert results_of(user.seen[3]).collection.papers == []
    third = results_of(user.seen[5]).collection.papers
    assert third, "the sources answer again"
    labels = {p.id: p.label for p in third}
    assert "relevant" in labels.values() and "irrelevant" in labels.values()
    unjudged = [p for p in third if p.label is None]
    assert any("you marked" in (p.reason or "") for p in unjudged), "the feedback model is applied"
    assert {p.id for p in collection.papers} >= {p.id for p in third}


# --- offline ----------------------------------------------------------------------------


async def test_offline_the_run_tries_each_source_once_and_says_so_once(
    db_settings: Settings,
) -> None:
    world = LiteratureWorld(offline=True)
    runtime = make_runtime(db_settings, source_transport=world.transport())
    try:
        harness = Harness(runtime, world)
        user = ScriptedUser([APPROVE, APPROVE])
        workflow = harness.workflow(user)

        collection = await workflow.run(QUESTION)
    finally:
        await runtime.close()

    assert len(world.requests) == len(SOURCES)  # not four attempts per source
    assert collection.notices == ["You appear to be offline: searching your library only."]
    statuses = {status.source: status for status in collection.source_statuses}
    assert list(statuses) == [*SOURCES, "library"]
    assert all(statuses[name].unreachable for name in SOURCES)
    assert statuses["library"].ok
    assert results_of(user.seen[1]).collection.notices == collection.notices
