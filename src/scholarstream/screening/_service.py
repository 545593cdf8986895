"""Screening projects, orchestrated: create one from a search run, a stream report or the
library; screen (the next record, decide, undo); settle conflicts; record full-text
decisions; count the PRISMA flow; export the records with their decisions."""

from __future__ import annotations

import asyncio
import io
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from scholarstream.db import Database
from scholarstream.embeddings import Embedder
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.screening._material import MATERIALS, Material, MaterialCache
from scholarstream.screening._origins import (
    FromLibrary,
    FromSearchRun,
    FromStreamReport,
    Gathered,
    RecordSource,
    from_library,
    from_search_run,
    from_stream_report,
)
from scholarstream.screening._store import Access, ScreeningStore
from scholarstream.screening._suggest import NO_MODEL, Suggester, model_suggestion
from scholarstream.screening.core import (
    BASIS_NOTES,
    DECISION_WRITERS,
    LABEL_WORDS,
    MAX_RECORDS_PAGE,
    RECORDS_PAGE,
    ConflictList,
    ConflictView,
    DecisionEvent,
    DecisionIn,
    DecisionRow,
    Exported,
    FullTextIn,
    FullTextItem,
    FullTextList,
    PrismaCounts,
    PrismaEntries,
    Progress,
    Project,
    ProjectList,
    ProjectSettings,
    ProjectUpdate,
    RecordFilter,
    RecordList,
    RecordRow,
    ResolutionIn,
    ScreeningStep,
    Suggestion,
    YourDecision,
    check_reasons_kept,
    current,
    decision_reason,
    outcomes,
    prisma_counts,
    progress,
    ranker_suggestion,
    record_view,
)
from scholarstream.sources.library import Library

RANKER_WAIT_SECONDS = 2.0
"""How long a request waits for the ranker's features to be built before the keyword
order stands in (the building goes on)."""


@dataclass
class ScreeningService:
    database: Database
    library: Library
    source_labels: Mapping[str, str]
    multi_user: bool
    embedder: Embedder | None = None
    """The embedding model the ranker reads the titles' meaning with (None: words only)."""
    materials: MaterialCache = MATERIALS

    @property
    def store(self) -> ScreeningStore:
        return ScreeningStore(self.database)

    # --- projects ------------------------------------------------------------------------

    async def gather(self, user_id: uuid.UUID, source: RecordSource) -> Gathered:
        if isinstance(source, FromSearchRun):
            return await from_search_run(self.database, user_id, source, self.source_labels)
        if isinstance(source, FromStreamReport):
            return await from_stream_report(self.database, user_id, source, self.source_labels)
        assert isinstance(source, FromLibrary)
        return await from_library(self.library, user_id, source)

    async def create(
        self, user_id: uuid.UUID, settings: ProjectSettings, source: RecordSource
    ) -> Project:
        """A new project; ``ConflictError`` when one of the user's projects has the name
        already (case and runs of spaces aside), before any record is gathered."""
        await self.store.check_name_free(user_id, settings.name)
        gathered = await self.gather(user_id, source)
        return await self.store.create(
            user_id, settings, gathered.origin, gathered.identification, gathered.records
        )

    async def list(self, user_id: uuid.UUID) -> ProjectList:
        """The user's projects, each with how many of its records they have screened."""
        projects = []
        for summary in await self.store.list(user_id):
            mine = current(await self.store.events(summary.id), "screen", user_id)
            projects.append(summary.model_copy(update={"screened": len(mine)}))
        return ProjectList(projects=projects)

    async def get(self, user_id: uuid.UUID, project_id: uuid.UUID) -> Project:
        return await self.store.get(user_id, project_id)

    async def update(
        self, user_id: uuid.UUID, project_id: uuid.UUID, change: ProjectUpdate
    ) -> Project:
        project = await self.store.get(user_id, project_id)
        if change.exclusion_criteria is not None:
            check_reasons_kept(
                project.exclusion_criteria,
                change.exclusion_criteria,
                await self.store.events(project_id),
            )
        return await self.store.update(user_id, project_id, change.applied_to(project.settings))

    async def delete(self, user_id: uuid.UUID, project_id: uuid.UUID) -> None:
        await self.store.delete(user_id, project_id)
        self.materials.forget(project_id)

    async def add_reviewer(
        self, user_id: uuid.UUID, project_id: uuid.UUID, username: str
    ) -> Project:
        if not self.multi_user:
            raise ConflictError(
                "A second reviewer needs multi-user mode: in single-user mode you are the "
                "only reviewer.",
                hint="Start the server with SCHOLARSTREAM_SERVER__MULTI_USER=true and create "
                "an account for each reviewer (scholarstream users create NAME).",
            )
        return await self.store.add_reviewer(user_id, project_id, username)

    async def remove_reviewer(
        self, user_id: uuid.UUID, project_id: uuid.UUID, reviewer_id: uuid.UUID
    ) -> Project:
        return await self.store.remove_reviewer(user_id, project_id, reviewer_id)

    # --- screening -----------------------------------------------------------------------

    async def _material(self, project_id: uuid.UUID) -> Material:
        return await self.materials.get(
            project_id, lambda: self.store.records(project_id), self.embedder
        )

    async def _step(
        self,
        user_id: uuid.UUID,
        project: Project,
        *,
        show: uuid.UUID | None = None,
        message: str | None = None,
        skip: frozenset[uuid.UUID] = frozenset(),
    ) -> ScreeningStep:
        """The view for ``user_id``: ``show`` (a record just undone), else the next one
        (not one of ``skip``, the records passed over, unless nothing else is left)."""
        material = await self._material(project.id)
        events = await self.store.events(project.id)
        mine = current(events, "screen", user_id)
        total = len(material.records)
        state = progress(total, events, user_id)
        unscreened = [i for i, r in enumerate(material.records) if r.id not in mine]
        labels = {
            material.index[rid]: event.decision == "include"
            for rid, event in mine.items()
            if event.decision in ("include", "exclude") and rid in material.index
        }
        relevance = await asyncio.to_thread(material.relevance, project.keywords, project.question)
        learnable = len(set(labels.values())) == 2
        # Built ahead (in the background) so it is ready when the reviewer's decisions are.
        material.prepare()
        model = await material.ranker(RANKER_WAIT_SECONDS) if learnable else None
        choices = await material.rank(unscreened, labels, relevance, model)
        scores = {material.records[c.index].id: c.score for c in choices if c.score is not None}
        material.last_scores[user_id] = scores
        basis = choices[0].basis if choices else None
        material.learned[user_id] = basis == "ranker"
        if basis == "ranker" or basis is None:
            note = BASIS_NOTES["ranker"]
        elif learnable:
            note = (
                f"The active-learning ranker is still reading the {total:,} records; "
                "meanwhile records come in order of relevance to the keywords and question."
            )
        else:
            note = BASIS_NOTES[basis]
        if show is not None and show in material.index:
            held = mine.get(show)
            return ScreeningStep(
                project_id=project.id,
                record=record_view(material.records[material.index[show]], project.keywords),
                score=scores.get(show),
                basis=basis,
                basis_note=note,
                your_decision=YourDecision.of(held) if held else None,
                message=message,
                progress=state,
            )
        if not choices:
            return ScreeningStep(
                project_id=project.id,
                record=None,
                score=None,
                basis=None,
                basis_note="You have screened every record of this project.",
                message=message,
                progress=state,
            )
        top = next((c for c in choices if material.records[c.index].id not in skip), choices[0])
        return ScreeningStep(
            project_id=project.id,
            record=record_view(material.records[top.index], project.keywords),
            score=top.score,
            basis=top.basis,
            basis_note=note,
            message=message,
            progress=state,
        )

    async def next(
        self,
        user_id: uuid.UUID,
        project_id: uuid.UUID,
        skip: frozenset[uuid.UUID] = frozenset(),
    ) -> ScreeningStep:
        """The record to screen next; ``skip``: records passed over for now."""
        return await self._step(user_id, await self.store.get(user_id, project_id), skip=skip)

    async def progress(self, user_id: uuid.UUID, project_id: uuid.UUID) -> Progress:
        """Your own progress (blind: nobody else's decisions are read)."""
        project = await self.store.get(user_id, project_id)
        return progress(project.record_count, await self.store.events(project_id), user_id)

    async def show(
        self, user_id: uuid.UUID, project_id: uuid.UUID, record_id: uuid.UUID
    ) -> ScreeningStep:
        """The screening view on one record (to change your decision on it)."""
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        if record_id not in material.index:
            raise NotFoundError(
                "That record is not in this project.",
                hint="Take the record from the screening view or the project's list.",
            )
        return await self._step(user_id, project, show=record_id)

    async def decide(
        self,
        user_id: uuid.UUID,
        project_id: uuid.UUID,
        body: DecisionIn,
        skip: frozenset[uuid.UUID] = frozenset(),
    ) -> ScreeningStep:
        project = await self.store.get(user_id, project_id)
        reason = decision_reason(project.settings, body.decision, body.reason)
        material = await self._material(project_id)
        # The ranker's probability, when the ranker chose (not the keyword order's score).
        learned = material.learned.get(user_id, False)
        score = material.last_scores.get(user_id, {}).get(body.record_id) if learned else None
        accepted: str | None = None
        if body.accepted_suggestion:
            suggestion = await self.store.suggestion(project_id, body.record_id)
            accepted = suggestion.label if suggestion is not None else "ranker"
        await self.store.decide(
            user_id,
            project_id,
            body.record_id,
            "screen",
            body.decision,
            reason=reason,
            score=score,
            accepted_suggestion=accepted,
        )
        title = material.records[material.index[body.record_id]].record.title
        said = LABEL_WORDS[body.decision] + (f" ({reason})" if reason else "")
        return await self._step(user_id, project, message=f"{said}: {_short(title)}", skip=skip)

    async def undo(self, user_id: uuid.UUID, project_id: uuid.UUID) -> ScreeningStep:
        project = await self.store.get(user_id, project_id)
        undone = await self.store.undo(user_id, project_id)
        if undone is None:
            return await self._step(user_id, project, message="Nothing to undo.")
        material = await self._material(project_id)
        title = material.records[material.index[undone.record_id]].record.title
        return await self._step(
            user_id,
            project,
            show=undone.record_id,
            message=f"Undone: {LABEL_WORDS[undone.decision]} of {_short(title)}",
        )

    async def records(
        self,
        user_id: uuid.UUID,
        project_id: uuid.UUID,
        *,
        offset: int = 0,
        limit: int = RECORDS_PAGE,
        decision: RecordFilter | None = None,
    ) -> RecordList:
        """A page of the records (``offset``, ``limit``), in the project's order, each with
        your decision (and, for the owner, the project's outcome); ``decision``: only the
        records you decided so (``unscreened``: those you have not decided)."""
        if not 1 <= limit <= MAX_RECORDS_PAGE or offset < 0:
            raise InvalidInputError(
                f"A page holds 1 to {MAX_RECORDS_PAGE} records, from offset 0.",
                hint=f"Give a limit from 1 to {MAX_RECORDS_PAGE} and an offset of 0 or more.",
            )
        found = await self.store.access(user_id, project_id)
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        events = await self.store.events(project_id)
        mine = current(events, "screen", user_id)
        listed = [
            i
            for i, item in enumerate(material.records)
            if decision is None
            or (mine[item.id].decision == decision if item.id in mine else decision == "unscreened")
        ]
        page = listed[offset : offset + limit]
        result = (
            outcomes(
                [material.records[i].id for i in page], [r.id for r in project.reviewers], events
            ).items
            if found.role == "owner"
            else None
        )
        rows = []
        for n, i in enumerate(page):
            item = material.records[i]
            held = mine.get(item.id)
            rows.append(
                RecordRow(
                    record_id=item.id,
                    source_record_id=item.record.record_id,
                    position=item.position + 1,
                    title=item.record.title,
                    year=item.record.year,
                    outcome=result[n].outcome if result is not None else None,
                    your_decision=held.decision if held else None,
                    your_reason=held.reason if held else None,
                )
            )
        return RecordList(
            total=len(listed), offset=offset, limit=limit, decision=decision, records=rows
        )

    async def suggest(
        self,
        user_id: uuid.UUID,
        project_id: uuid.UUID,
        record_id: uuid.UUID,
        suggester: Suggester | None,
    ) -> Suggestion:
        """A suggestion for the record: the model's (kept for every reviewer once made),
        else the ranker's score standing in, with why."""
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        if record_id not in material.index:
            raise NotFoundError(
                "That record is not in this project.",
                hint="Take the record from the screening view or the project's list.",
            )
        kept = await self.store.suggestion(project_id, record_id)
        if kept is not None:
            return kept
        note = NO_MODEL
        if suggester is not None:
            record = material.records[material.index[record_id]].record
            answer = await model_suggestion(suggester, project.settings, record)
            if not isinstance(answer, str):
                owner = next(r.id for r in project.reviewers if r.role == "owner")
                await self.store.save_suggestion(owner, project_id, record_id, answer)
                return answer
            note = answer
        if user_id not in material.learned:
            await self._step(user_id, project)  # ranks the records for this reviewer
        learned = material.learned.get(user_id, False)
        score = material.last_scores.get(user_id, {}).get(record_id)
        return ranker_suggestion(score if learned else None, learned, note)

    # --- conflicts and full text (the owner's) -------------------------------------------

    async def _owned(self, user_id: uuid.UUID, project_id: uuid.UUID, what: str) -> Access:
        found = await self.store.access(user_id, project_id)
        found.require_owner(what)
        return found

    async def conflicts(self, user_id: uuid.UUID, project_id: uuid.UUID) -> ConflictList:
        await self._owned(user_id, project_id, "see the conflicts (it would unblind the reviewers)")
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        events = await self.store.events(project_id)
        result = outcomes(
            [r.id for r in material.records], [r.id for r in project.reviewers], events
        )
        names = {str(r.id): r.username for r in project.reviewers}
        conflicts = []
        for item in result.of("conflict"):
            record = material.records[material.index[item.record_id]].record
            conflicts.append(
                ConflictView(
                    record_id=item.record_id,
                    title=record.title,
                    year=record.year,
                    decisions=item.decisions,
                    reviewers=names,
                )
            )
        resolved = sum(1 for item in result.items if item.resolved)
        return ConflictList(conflicts=conflicts, resolved=resolved)

    async def resolve(
        self, user_id: uuid.UUID, project_id: uuid.UUID, record_id: uuid.UUID, body: ResolutionIn
    ) -> ConflictList:
        await self._owned(user_id, project_id, "settle conflicts")
        project = await self.store.get(user_id, project_id)
        reason = decision_reason(project.settings, body.decision, body.reason)
        await self.store.decide(
            user_id, project_id, record_id, "resolve", body.decision, reason=reason
        )
        return await self.conflicts(user_id, project_id)

    async def fulltext(self, user_id: uuid.UUID, project_id: uuid.UUID) -> FullTextList:
        await self._owned(user_id, project_id, "record full-text decisions")
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        events = await self.store.events(project_id)
        result = outcomes(
            [r.id for r in material.records], [r.id for r in project.reviewers], events
        )
        decided = current(events, "fulltext")
        items = []
        for item in result.of("include"):
            record = material.records[material.index[item.record_id]].record
            event = decided.get(item.record_id)
            items.append(
                FullTextItem(
                    record_id=item.record_id,
                    title=record.title,
                    year=record.year,
                    doi=record.ids.doi,
                    pmid=record.ids.pmid,
                    decision=event.decision if event else None,
                    reason=event.reason if event else None,
                )
            )
        return FullTextList(items=items)

    async def decide_fulltext(
        self, user_id: uuid.UUID, project_id: uuid.UUID, record_id: uuid.UUID, body: FullTextIn
    ) -> FullTextList:
        listed = await self.fulltext(user_id, project_id)
        if record_id not in (await self._material(project_id)).index:
            raise NotFoundError(
                "That record is not in this project.",
                hint="Take the record from the project's full-text list.",
            )
        if record_id not in {item.record_id for item in listed.items}:
            raise ConflictError(
                "Only records included on title and abstract go on to the full-text stage.",
                hint="Include the record (or settle its conflict) first.",
            )
        project = await self.store.get(user_id, project_id)
        reason = decision_reason(project.settings, body.decision, body.reason, free_text=True)
        if body.decision == "exclude" and reason is None:
            raise InvalidInputError(
                "A full-text exclusion needs a reason.",
                hint="Pick an exclusion criterion or write the reason.",
            )
        await self.store.decide(
            user_id, project_id, record_id, "fulltext", body.decision, reason=reason
        )
        return await self.fulltext(user_id, project_id)

    # --- PRISMA and exports --------------------------------------------------------------

    async def prisma(self, user_id: uuid.UUID, project_id: uuid.UUID) -> PrismaCounts:
        await self._owned(
            user_id, project_id, "see the PRISMA flow (it counts every reviewer's decisions)"
        )
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        events = await self.store.events(project_id)
        result = outcomes(
            [r.id for r in material.records], [r.id for r in project.reviewers], events
        )
        return prisma_counts(
            project.identification,
            await self.store.entries(project_id),
            result,
            current(events, "fulltext"),
        )

    async def entries(self, user_id: uuid.UUID, project_id: uuid.UUID) -> PrismaEntries:
        await self._owned(user_id, project_id, "see the PRISMA numbers")
        return await self.store.entries(project_id)

    async def save_entries(
        self, user_id: uuid.UUID, project_id: uuid.UUID, entries: PrismaEntries
    ) -> PrismaCounts:
        await self.store.save_entries(user_id, project_id, entries)
        return await self.prisma(user_id, project_id)

    async def export(
        self, user_id: uuid.UUID, project_id: uuid.UUID, format_name: str
    ) -> tuple[str, int]:
        """The records with their decisions as ``format_name`` (ris, bibtex, csv): the
        owner's export has the project's outcome and every reviewer's decision; a
        reviewer's has their own decisions only."""
        writer = DECISION_WRITERS.get(format_name)
        if writer is None:
            raise InvalidInputError(
                f"Screening decisions export as RIS, BibTeX or CSV, not '{format_name}'.",
                hint="Use format=ris, format=bibtex or format=csv.",
            )
        found = await self.store.access(user_id, project_id)
        project = await self.store.get(user_id, project_id)
        material = await self._material(project_id)
        events = await self.store.events(project_id)
        names = {r.id: r.username for r in project.reviewers}
        rows: list[Exported] = []
        if found.role == "owner":
            result = outcomes([r.id for r in material.records], list(names), events)
            fulltext = current(events, "fulltext")
            scores = _latest_scores(events)
            for item, outcome in zip(material.records, result.items, strict=True):
                ft = fulltext.get(item.id)
                reviewers = "; ".join(
                    f"{names.get(d.reviewer_id, 'former reviewer')}: {d.decision}"
                    + (f" ({d.reason})" if d.reason else "")
                    for d in outcome.decisions
                )
                if outcome.resolved:
                    reviewers += ("; " if reviewers else "") + "settled by the owner"
                rows.append(
                    (
                        item.record,
                        DecisionRow(
                            record_id=item.id,
                            decision=outcome.outcome,
                            reason=outcome.reason,
                            reviewers=reviewers,
                            score=scores.get(item.id),
                            full_text_decision=ft.decision if ft else None,
                            full_text_reason=ft.reason if ft else None,
                        ),
                    )
                )
        else:
            mine = current(events, "screen", user_id)
            for item in material.records:
                event = mine.get(item.id)
                rows.append(
                    (
                        item.record,
                        DecisionRow(
                            record_id=item.id,
                            decision=event.decision if event else "unscreened",
                            reason=event.reason if event else None,
                            reviewers=names.get(user_id, "") if event else "",
                            score=event.score if event else None,
                        ),
                    )
                )
        out = io.StringIO()
        writer(rows, out)
        return out.getvalue(), len(rows)


def _latest_scores(events: list[DecisionEvent]) -> dict[uuid.UUID, float]:
    """Record -> the ranker score at its latest title-and-abstract decision."""
    scores: dict[uuid.UUID, float] = {}
    for event in sorted(events, key=lambda e: (e.decided_at, e.seq)):
        if event.stage == "screen" and not event.undone and event.score is not None:
            scores[event.record_id] = event.score
    return scores


def _short(title: str, most: int = 80) -> str:
    return title if len(title) <= most else title[: most - 1].rsplit(" ", 1)[0] + "…"
