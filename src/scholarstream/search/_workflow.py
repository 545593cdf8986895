"""SearchWorkflow (seed 003): parse -> build -> [checkpoint 1] -> search -> dedup -> score
-> organize -> [checkpoint 2], iterating on the user's feedback.

Decision semantics:

    checkpoint             action   behaviour
    STRATEGY_CONFIRMATION  APPROVE  proceed with the strategy
    STRATEGY_CONFIRMATION  EDIT     revised_data validated as SearchStrategy, used
    STRATEGY_CONFIRMATION  REJECT   note -> free-text feedback, next iteration
    RESULT_REVIEW          APPROVE  complete: the collection (+ papers marked relevant before)
    RESULT_REVIEW          EDIT     revised_data validated as UserFeedback, iterate
    RESULT_REVIEW          REJECT   note -> free-text feedback, iterate

Every strategy built on feedback is reviewed against the one before
(``search.query.review_strategy``): only the changes the feedback's words ask for are
made, each listed with its phrase (``StrategyPayload.changes``), the others are undone and
listed (``not_made``), and no change may leave out a paper the user marked relevant. A
strategy the user edits is kept as written, with a warning in the results' notices when
it would leave out papers marked relevant.

Failures of the intent parser and of the checkpoint handler propagate; failed sources do
not (the Searcher reports them in the collection's ``source_statuses``). An LLM skill whose
model answer is unusable, late or failed uses its offline counterpart for that call and
tells ``fallbacks``; the run's state carries one record per skill (``state.fallbacks``).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.search._fallbacks import FallbackLog
from scholarstream.search.core import (
    Checkpoint,
    CheckpointHandler,
    CheckpointKind,
    Decision,
    DecisionAction,
    Deduplicator,
    IntentParser,
    PaperCollection,
    ParsedIntent,
    QueryBuilder,
    QueryBuilderInput,
    RelevanceScorer,
    ResultOrganizer,
    ResultPayload,
    Searcher,
    SearchStrategy,
    StrategyChange,
    StrategyPayload,
    UserFeedback,
    WorkflowState,
    revised_feedback,
    revised_strategy,
)
from scholarstream.search.query import read_feedback, review_edit, review_strategy
from scholarstream.sources import SourceStatus

if TYPE_CHECKING:
    from scholarstream.search._assembly import SearchOptions, SearchServices

Stage = Literal["parsing", "building", "searching", "deduplicating", "scoring", "organizing"]


class StageObserver(Protocol):
    """Hears which step a run is in and how each source fared (progress in the terminal,
    the run's status in the API)."""

    async def stage(self, run_id: str, iteration: int, stage: Stage) -> None: ...

    def source_done(self, status: SourceStatus) -> None: ...


class SearchWorkflow:
    def __init__(
        self,
        intent_parser: IntentParser,
        query_builder: QueryBuilder,
        searcher: Searcher,
        deduplicator: Deduplicator,
        relevance_scorer: RelevanceScorer,
        result_organizer: ResultOrganizer,
        checkpoint_handler: CheckpointHandler | None = None,
        max_iterations: int = 5,
        enable_strategy_checkpoint: bool = True,
        *,
        observer: StageObserver | None = None,
        fallbacks: FallbackLog | None = None,
    ) -> None:
        if max_iterations < 1:
            raise InvalidInputError(
                f"max_iterations must be at least 1, not {max_iterations}.",
                hint="Allow one iteration or more.",
            )
        self.intent_parser = intent_parser
        self.query_builder = query_builder
        self.searcher = searcher
        self.deduplicator = deduplicator
        self.relevance_scorer = relevance_scorer
        self.result_organizer = result_organizer
        self.checkpoint_handler = checkpoint_handler
        self.max_iterations = max_iterations
        self.enable_strategy_checkpoint = enable_strategy_checkpoint
        self.observer = observer
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()
        """Where the skills record their fallbacks (the skills built with the workflow
        share it); ``state.fallbacks`` follows it at each checkpoint and at the end."""
        self.state = WorkflowState()

    @classmethod
    def from_config(
        cls,
        services: SearchServices,
        owner_id: uuid.UUID,
        checkpoint_handler: CheckpointHandler | None = None,
        max_iterations: int | None = None,
        *,
        options: SearchOptions | None = None,
        observer: StageObserver | None = None,
        offline: bool | None = None,
    ) -> SearchWorkflow:
        """The skills for this user: LLM skills when a model is configured, the
        deterministic ones in offline mode (``offline``: this user has no model; unset,
        the server's settings decide); the sources from the settings or ``options``."""
        from scholarstream.search._assembly import SearchOptions, build_skills

        options = options or SearchOptions()
        fallbacks = FallbackLog()
        skills = build_skills(
            services,
            owner_id,
            options,
            on_source_done=observer.source_done if observer else None,
            fallbacks=fallbacks,
            offline=offline,
        )
        return cls(
            *skills,
            checkpoint_handler=checkpoint_handler,
            max_iterations=max_iterations or services.settings.max_iterations,
            enable_strategy_checkpoint=options.strategy_checkpoint,
            observer=observer,
            fallbacks=fallbacks,
        )

    async def run(self, user_input: str, *, run_id: str | None = None) -> PaperCollection:
        try:
            return await self._run(user_input, run_id=run_id)
        finally:
            # Whatever the end (done, failed, cancelled), the state says what fell back.
            self._note_fallbacks()

    def _note_fallbacks(self) -> None:
        self.state.fallbacks = self.fallbacks.items

    async def _run(self, user_input: str, *, run_id: str | None) -> PaperCollection:
        if not user_input.strip():
            raise InvalidInputError(
                "The search question is empty.",
                hint="Describe what you are looking for, e.g. 'SGLT2 inhibitors and heart "
                "failure outcomes in type 2 diabetes'.",
            )
        run_id = run_id or str(uuid.uuid4())
        state = self.state = WorkflowState()
        await self._stage(run_id, "parsing")
        intent = await self.intent_parser.parse(user_input)
        collection: PaperCollection | None = None
        strategy: SearchStrategy | None = None

        while state.current_iteration < self.max_iterations:
            await self._stage(run_id, "building")
            strategy = await self.query_builder.build(
                QueryBuilderInput(
                    intent=intent,
                    previous_strategies=state.previous_strategies,
                    user_feedback=state.latest_feedback,
                    rejected_strategies=state.rejected_strategies,
                )
            )
            strategy, changes, not_made = self._reviewed(strategy)
            warnings: list[str] = []

            if self.enable_strategy_checkpoint and self.checkpoint_handler is not None:
                self._note_fallbacks()
                decision = await self.checkpoint_handler.handle(
                    _checkpoint(
                        CheckpointKind.STRATEGY_CONFIRMATION,
                        StrategyPayload(
                            intent=intent,
                            strategy=strategy,
                            iteration=state.current_iteration,
                            changes=changes,
                            not_made=not_made,
                        ),
                        run_id,
                        state.current_iteration,
                    )
                )
                if decision.action is DecisionAction.EDIT:
                    proposed, strategy = strategy, revised_strategy(decision)
                    # The user's query is kept as written; it is only warned about.
                    warnings = review_edit(proposed, strategy, state.accumulated_papers)
                    changes, not_made = [], []
                elif decision.action is DecisionAction.REJECT:
                    state.record_iteration(
                        strategy,
                        0,
                        _coerce_feedback(decision),
                        outcome="strategy_rejected",
                        changes=changes,
                        not_made=not_made,
                    )
                    continue

            collection = await self._run_iteration(run_id, intent, strategy, user_input)
            if warnings:
                notices = list(dict.fromkeys([*collection.notices, *warnings]))
                collection = collection.model_copy(update={"notices": notices})
            state.last_collection = collection

            if self.checkpoint_handler is not None:
                self._note_fallbacks()
                decision = await self.checkpoint_handler.handle(
                    _checkpoint(
                        CheckpointKind.RESULT_REVIEW,
                        ResultPayload(
                            collection=collection,
                            accumulated_papers=list(state.accumulated_papers),
                            iteration=state.current_iteration,
                        ),
                        run_id,
                        state.current_iteration,
                    )
                )
            else:
                decision = Decision(action=DecisionAction.APPROVE)

            if decision.action is DecisionAction.APPROVE:
                feedback = _coerce_feedback(decision) if decision.revised_data else None
                if feedback is not None:
                    _take_feedback(state, collection, feedback)
                state.record_iteration(
                    strategy,
                    len(collection.papers),
                    feedback,
                    outcome="approved",
                    changes=changes,
                    not_made=not_made,
                )
                state.is_complete = True
                return _merge_accumulated(collection, state)

            feedback = (
                revised_feedback(decision)
                if decision.action is DecisionAction.EDIT
                else _coerce_feedback(decision)
            )
            _take_feedback(state, collection, feedback)
            state.record_iteration(
                strategy, len(collection.papers), feedback, changes=changes, not_made=not_made
            )

        # Out of iterations: the last results, keeping what the user marked relevant.
        state.is_complete = True
        if collection is None:
            collection = PaperCollection(question=user_input, strategy=strategy)
        return _merge_accumulated(collection, state)

    def _reviewed(
        self, strategy: SearchStrategy
    ) -> tuple[SearchStrategy, list[StrategyChange], list[StrategyChange]]:
        """The built strategy with only the changes the latest feedback asks for, none that
        would leave out a paper marked relevant (see ``search.query.review_strategy``)."""
        state = self.state
        feedback = state.latest_feedback
        if not state.previous_strategies or feedback is None:
            return strategy, [], []
        review = review_strategy(
            state.previous_strategies[-1],
            strategy,
            read_feedback(feedback),
            feedback_text=feedback.free_text_feedback,
            relevant=state.accumulated_papers,
        )
        return review.strategy, review.changes, review.not_made

    async def _run_iteration(
        self, run_id: str, intent: ParsedIntent, strategy: SearchStrategy, user_input: str
    ) -> PaperCollection:
        await self._stage(run_id, "searching")
        results = await self.searcher.search(strategy)
        await self._stage(run_id, "deduplicating")
        deduped = await self.deduplicator.deduplicate(results.records)
        await self._stage(run_id, "scoring")
        scored = await self.relevance_scorer.score(
            deduped, intent, labelled=list(self.state.labelled)
        )
        await self._stage(run_id, "organizing")
        collection = await self.result_organizer.organize(
            scored, strategy, user_input, results=results
        )
        notices = list(dict.fromkeys([*collection.notices, *results.notices]))
        if notices != collection.notices:
            collection = collection.model_copy(update={"notices": notices})
        return collection

    async def _stage(self, run_id: str, stage: Stage) -> None:
        if self.observer is not None:
            await self.observer.stage(run_id, self.state.current_iteration, stage)


def _checkpoint(
    kind: CheckpointKind,
    payload: StrategyPayload | ResultPayload,
    run_id: str,
    iteration: int,
) -> Checkpoint:
    return Checkpoint(
        kind=kind,
        payload=payload,
        run_id=run_id,
        iteration=iteration,
        timestamp=dt.datetime.now(dt.UTC).isoformat(),
    )


def _coerce_feedback(decision: Decision) -> UserFeedback:
    """A REJECT (or an APPROVE with marks) as feedback: its revised_data when that is
    feedback, else its note as free text."""
    if decision.revised_data and isinstance(decision.revised_data, dict):
        try:
            feedback = UserFeedback.model_validate(decision.revised_data)
        except ValidationError:
            pass
        else:
            if decision.note and not feedback.free_text_feedback:
                feedback = feedback.model_copy(update={"free_text_feedback": decision.note})
            return feedback
    return UserFeedback(free_text_feedback=decision.note or "")


def _take_feedback(
    state: WorkflowState, collection: PaperCollection, feedback: UserFeedback
) -> None:
    """Papers marked relevant join the accumulated list; every mark trains the scorer."""
    state.add_labels(collection, feedback)
    relevant = set(feedback.marked_relevant)
    state.add_accumulated([p for p in collection.papers if p.id in relevant])
    irrelevant = set(feedback.marked_irrelevant)
    if irrelevant:
        # A paper marked relevant earlier and irrelevant now is no longer wanted.
        state.accumulated_papers = [p for p in state.accumulated_papers if p.id not in irrelevant]


def _merge_accumulated(collection: PaperCollection, state: WorkflowState) -> PaperCollection:
    """The collection plus the papers marked relevant in earlier iterations, each once,
    with the user's own judgement shown on every paper."""
    labels = {label.id: label.relevant for label in state.labelled}
    current = {p.id for p in collection.papers}
    extras = [p for p in state.accumulated_papers if p.id not in current]
    papers = [
        p.model_copy(update={"label": "relevant" if labels[p.id] else "irrelevant"})
        if p.id in labels
        else p
        for p in [*collection.papers, *extras]
    ]
    if not extras and not labels:
        return collection
    return collection.model_copy(
        update={
            "papers": papers,
            "stats": collection.stats.model_copy(update={"total": len(papers)}),
        }
    )
