"""Screening projects in the database.

A project belongs to its owner; the reviewers the owner adds reach it too (their
``screening_reviewers`` row is in their own scope). Everyone else gets 404, as for any
resource that is not theirs. Changing the project (criteria, reviewers, PRISMA numbers,
full-text decisions, resolutions) is the owner's; a reviewer screens.

Each call is one short transaction. Decisions are appended, never overwritten; undo marks
the reviewer's last one undone.

A project's name is unique among the projects its owner owns, ignoring case and runs of
spaces (``name_key``); a project shared with you may bear the name of one of yours."""

from __future__ import annotations

import builtins
import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import Database, OwnerScope, utcnow
from scholarstream.db.tables import (
    ScreeningDecisionRow,
    ScreeningProjectRow,
    ScreeningRecordRow,
    ScreeningReviewerRow,
    ScreeningSuggestionRow,
    User,
)
from scholarstream.errors import ConflictError, NotFoundError, PermissionDeniedError
from scholarstream.papers import Record, paper_key
from scholarstream.screening.core import (
    DecisionEvent,
    Identification,
    Origin,
    PrismaEntries,
    Project,
    ProjectSettings,
    ProjectSummary,
    Reviewer,
    Role,
    ScreeningRecord,
    Stage,
    Suggestion,
)

PROJECT = "Screening project"
_BATCH = 500


def _not_found(project_id: uuid.UUID) -> NotFoundError:
    return NotFoundError(
        f"That {PROJECT.lower()} was not found: it was deleted, or it is not shared with you.",
        hint="Open the Screening page (or 'scholarstream screening list') to see your projects.",
    )


def owner_only(what: str) -> PermissionDeniedError:
    return PermissionDeniedError(
        f"Only the project's owner can {what}.",
        hint="Ask the person who created the project.",
    )


def name_key(name: str) -> str:
    """What two project names are compared by: neither case nor runs of spaces count."""
    return " ".join(name.split()).casefold()


def name_taken(existing: str, created: dt.datetime) -> ConflictError:
    return ConflictError(
        f"You already have a screening project named “{existing}” (created {created:%Y-%m-%d}).",
        hint=f"Choose another name, or open “{existing}” from your screening projects (the "
        "Screening page, or 'scholarstream screening list').",
    )


async def _check_name(
    session: AsyncSession,
    owner_id: uuid.UUID,
    name: str,
    other_than: uuid.UUID | None = None,
    *,
    lock: bool = False,
) -> None:
    """``ConflictError`` when another of the owner's projects (not ``other_than``) has the
    name. With ``lock`` the owner's account row is locked first (PostgreSQL; SQLite's writes
    are serialised already), so two requests cannot both take a free name."""
    if lock:
        await session.execute(select(User.id).where(User.id == owner_id).with_for_update())
    key = name_key(name)
    rows = await session.execute(
        select(ScreeningProjectRow.id, ScreeningProjectRow.name, ScreeningProjectRow.created_at)
        .where(ScreeningProjectRow.owner_id == owner_id)
        .order_by(ScreeningProjectRow.created_at)
    )
    for project_id, existing, created in rows:
        if project_id != other_than and name_key(existing) == key:
            raise name_taken(existing, created)


@dataclass(frozen=True)
class Access:
    """A project as the caller may use it."""

    project: ScreeningProjectRow
    role: Role

    @property
    def id(self) -> uuid.UUID:
        return self.project.id

    @property
    def owner_id(self) -> uuid.UUID:
        return self.project.owner_id

    def require_owner(self, what: str) -> None:
        if self.role != "owner":
            raise owner_only(what)


def _settings(row: ScreeningProjectRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "question": row.question,
        "keywords": row.keywords,
        "inclusion_criteria": row.inclusion_criteria,
        "exclusion_criteria": row.exclusion_criteria,
    }


def _event(row: ScreeningDecisionRow) -> DecisionEvent:
    return DecisionEvent(
        id=row.id,
        record_id=row.record_id,
        reviewer_id=row.owner_id,
        stage=row.stage,
        decision=row.decision,
        reason=row.reason,
        score=row.score,
        accepted_suggestion=row.accepted_suggestion,
        seq=row.seq,
        decided_at=row.decided_at,
        undone=row.undone_at is not None,
    )


async def access(session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID) -> Access:
    """The project, if the user owns it or reviews it; 404 otherwise."""
    row = await session.get(ScreeningProjectRow, project_id)
    if row is None:
        raise _not_found(project_id)
    if row.owner_id == user_id:
        return Access(row, "owner")
    member = await session.scalar(
        select(ScreeningReviewerRow.id).where(
            ScreeningReviewerRow.project_id == project_id, ScreeningReviewerRow.owner_id == user_id
        )
    )
    if member is None:
        raise _not_found(project_id)
    return Access(row, "reviewer")


async def _reviewers(session: AsyncSession, row: ScreeningProjectRow) -> list[Reviewer]:
    owner = await session.get(User, row.owner_id)
    assert owner is not None  # the foreign key cascades
    reviewers = [
        Reviewer(
            id=owner.id,
            username=owner.username,
            display_name=owner.display_name or None,
            role="owner",
        )
    ]
    members = await session.execute(
        select(User)
        .join(ScreeningReviewerRow, ScreeningReviewerRow.owner_id == User.id)
        .where(ScreeningReviewerRow.project_id == row.id)
        .order_by(ScreeningReviewerRow.created_at, User.username)
    )
    reviewers += [
        Reviewer(id=u.id, username=u.username, display_name=u.display_name or None, role="reviewer")
        for u in members.scalars()
    ]
    return reviewers


async def _project(session: AsyncSession, found: Access) -> Project:
    row = found.project
    count = await session.scalar(
        select(func.count())
        .select_from(ScreeningRecordRow)
        .where(ScreeningRecordRow.project_id == row.id)
    )
    return Project.model_validate(
        {
            **_settings(row),
            "id": row.id,
            "origin": row.origin,
            "identification": row.identification,
            "record_count": count or 0,
            "reviewers": await _reviewers(session, row),
            "your_role": found.role,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
    )


class ScreeningStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    # --- projects ------------------------------------------------------------------------

    async def create(
        self,
        owner_id: uuid.UUID,
        settings: ProjectSettings,
        origin: Origin,
        identification: Identification,
        records: Sequence[Record],
    ) -> Project:
        async with self.database.session(write=True) as session:
            await _check_name(session, owner_id, settings.name, lock=True)
            scope = OwnerScope(session, owner_id)
            row = scope.add(
                ScreeningProjectRow(
                    **settings.model_dump(),
                    origin=origin.model_dump(mode="json"),
                    identification=identification.model_dump(mode="json"),
                    prisma_entries={},
                )
            )
            await session.flush()
            for start in range(0, len(records), _BATCH):
                for position, record in enumerate(records[start : start + _BATCH], start=start):
                    scope.add(
                        ScreeningRecordRow(
                            project_id=row.id,
                            position=position,
                            key=paper_key(record)[:300],
                            record=record.model_dump(mode="json"),
                        )
                    )
                await session.flush()
            return await _project(session, Access(row, "owner"))

    async def list(self, user_id: uuid.UUID) -> list[ProjectSummary]:
        """The user's projects and those they review, newest first."""
        async with self.database.session() as session:
            reviewed = select(ScreeningReviewerRow.project_id).where(
                ScreeningReviewerRow.owner_id == user_id
            )
            counts = (
                select(ScreeningRecordRow.project_id, func.count().label("n"))
                .group_by(ScreeningRecordRow.project_id)
                .subquery()
            )
            rows = await session.execute(
                select(ScreeningProjectRow, counts.c.n)
                .outerjoin(counts, counts.c.project_id == ScreeningProjectRow.id)
                .where(
                    or_(
                        ScreeningProjectRow.owner_id == user_id,
                        ScreeningProjectRow.id.in_(reviewed),
                    )
                )
                .order_by(ScreeningProjectRow.created_at.desc(), ScreeningProjectRow.id)
            )
            return [
                ProjectSummary(
                    id=row.id,
                    name=row.name,
                    origin=Origin.model_validate(row.origin),
                    record_count=n or 0,
                    your_role="owner" if row.owner_id == user_id else "reviewer",
                    created_at=row.created_at,
                )
                for row, n in rows
            ]

    async def access(self, user_id: uuid.UUID, project_id: uuid.UUID) -> Access:
        async with self.database.session() as session:
            return await access(session, user_id, project_id)

    async def check_name_free(self, owner_id: uuid.UUID, name: str) -> None:
        """``ConflictError`` when one of the owner's projects has the name already (checked
        again as the project is stored)."""
        async with self.database.session() as session:
            await _check_name(session, owner_id, name)

    async def get(self, user_id: uuid.UUID, project_id: uuid.UUID) -> Project:
        async with self.database.session() as session:
            return await _project(session, await access(session, user_id, project_id))

    async def update(
        self, user_id: uuid.UUID, project_id: uuid.UUID, settings: ProjectSettings
    ) -> Project:
        async with self.database.session(write=True) as session:
            found = await access(session, user_id, project_id)
            found.require_owner("change its name, question, keywords or criteria")
            if name_key(settings.name) != name_key(found.project.name):
                await _check_name(session, found.owner_id, settings.name, found.id, lock=True)
            for name, value in settings.model_dump().items():
                setattr(found.project, name, value)
            found.project.updated_at = utcnow()
            await session.flush()
            return await _project(session, found)

    async def delete(self, user_id: uuid.UUID, project_id: uuid.UUID) -> None:
        async with self.database.session(write=True) as session:
            found = await access(session, user_id, project_id)
            found.require_owner("delete it")
            # Children first: SQLite only cascades with its foreign keys pragma on.
            for table in (
                ScreeningSuggestionRow,
                ScreeningDecisionRow,
                ScreeningRecordRow,
                ScreeningReviewerRow,
            ):
                await session.execute(delete(table).where(table.project_id == project_id))
            await session.delete(found.project)

    # --- reviewers -----------------------------------------------------------------------

    async def add_reviewer(
        self, user_id: uuid.UUID, project_id: uuid.UUID, username: str
    ) -> Project:
        async with self.database.session(write=True) as session:
            found = await access(session, user_id, project_id)
            found.require_owner("add reviewers")
            user = await session.scalar(select(User).where(User.username == username.strip()))
            if user is None or not user.is_active:
                raise NotFoundError(
                    f"There is no account named '{username.strip()}'.",
                    hint="Check the username with the person (an administrator can list the "
                    "accounts with 'scholarstream users list').",
                )
            if user.id == found.owner_id:
                raise ConflictError(
                    "You are the project's owner and screen it already.",
                    hint="Add the other person's username.",
                )
            exists = await session.scalar(
                select(ScreeningReviewerRow.id).where(
                    ScreeningReviewerRow.project_id == project_id,
                    ScreeningReviewerRow.owner_id == user.id,
                )
            )
            if exists is None:
                OwnerScope(session, user.id).add(
                    ScreeningReviewerRow(project_id=project_id, added_by=user_id)
                )
                await session.flush()
            return await _project(session, found)

    async def remove_reviewer(
        self, user_id: uuid.UUID, project_id: uuid.UUID, reviewer_id: uuid.UUID
    ) -> Project:
        """Removes a reviewer; their decisions stay in the history (and count again if
        they are added back)."""
        async with self.database.session(write=True) as session:
            found = await access(session, user_id, project_id)
            found.require_owner("remove reviewers")
            result = await session.execute(
                delete(ScreeningReviewerRow).where(
                    ScreeningReviewerRow.project_id == project_id,
                    ScreeningReviewerRow.owner_id == reviewer_id,
                )
            )
            if not result.rowcount:  # type: ignore[attr-defined]
                raise NotFoundError(
                    "That person is not a reviewer of this project.",
                    hint="The project's page lists its reviewers.",
                )
            return await _project(session, found)

    # --- records and decisions -----------------------------------------------------------

    async def records(self, project_id: uuid.UUID) -> builtins.list[ScreeningRecord]:
        """Every record of the project (call after ``access``), in the order added."""
        async with self.database.session() as session:
            rows = await session.scalars(
                select(ScreeningRecordRow)
                .where(ScreeningRecordRow.project_id == project_id)
                .order_by(ScreeningRecordRow.position)
            )
            return [
                ScreeningRecord.model_validate(
                    {"id": r.id, "position": r.position, "key": r.key, "record": r.record}
                )
                for r in rows
            ]

    async def events(self, project_id: uuid.UUID) -> builtins.list[DecisionEvent]:
        """Every decision of the project, undone ones included, oldest first."""
        async with self.database.session() as session:
            rows = await session.scalars(
                select(ScreeningDecisionRow)
                .where(ScreeningDecisionRow.project_id == project_id)
                .order_by(ScreeningDecisionRow.decided_at, ScreeningDecisionRow.seq)
            )
            return [_event(row) for row in rows]

    async def decide(
        self,
        reviewer_id: uuid.UUID,
        project_id: uuid.UUID,
        record_id: uuid.UUID,
        stage: Stage,
        decision: str,
        *,
        reason: str | None = None,
        score: float | None = None,
        accepted_suggestion: str | None = None,
    ) -> DecisionEvent:
        """Appends one decision of ``reviewer_id`` (access checked by the caller)."""
        for attempt in range(3):
            try:
                async with self.database.session(write=True) as session:
                    known = await session.scalar(
                        select(ScreeningRecordRow.id).where(
                            ScreeningRecordRow.id == record_id,
                            ScreeningRecordRow.project_id == project_id,
                        )
                    )
                    if known is None:
                        raise NotFoundError(
                            "That record is not in this project.",
                            hint="Take the id from the screening view or the project's list.",
                        )
                    last = await session.scalar(
                        select(func.max(ScreeningDecisionRow.seq)).where(
                            ScreeningDecisionRow.project_id == project_id,
                            ScreeningDecisionRow.owner_id == reviewer_id,
                        )
                    )
                    row = OwnerScope(session, reviewer_id).add(
                        ScreeningDecisionRow(
                            project_id=project_id,
                            record_id=record_id,
                            stage=stage,
                            decision=decision,
                            reason=reason,
                            score=score,
                            accepted_suggestion=accepted_suggestion,
                            seq=(last or 0) + 1,
                        )
                    )
                    await session.flush()
                    return _event(row)
            except IntegrityError:
                # Two decisions of the same reviewer at once took the same number: again.
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def undo(
        self, reviewer_id: uuid.UUID, project_id: uuid.UUID, stage: Stage = "screen"
    ) -> DecisionEvent | None:
        """Marks the reviewer's last decision at ``stage`` undone; None when there is none."""
        async with self.database.session(write=True) as session:
            row = await session.scalar(
                select(ScreeningDecisionRow)
                .where(
                    ScreeningDecisionRow.project_id == project_id,
                    ScreeningDecisionRow.owner_id == reviewer_id,
                    ScreeningDecisionRow.stage == stage,
                    ScreeningDecisionRow.undone_at.is_(None),
                )
                .order_by(ScreeningDecisionRow.seq.desc())
                .limit(1)
            )
            if row is None:
                return None
            row.undone_at = utcnow()
            await session.flush()
            return _event(row)

    # --- PRISMA numbers and suggestions --------------------------------------------------

    async def entries(self, project_id: uuid.UUID) -> PrismaEntries:
        async with self.database.session() as session:
            row = await session.get(ScreeningProjectRow, project_id)
            if row is None:
                raise _not_found(project_id)
            return PrismaEntries.model_validate(row.prisma_entries or {})

    async def save_entries(
        self, user_id: uuid.UUID, project_id: uuid.UUID, entries: PrismaEntries
    ) -> None:
        async with self.database.session(write=True) as session:
            found = await access(session, user_id, project_id)
            found.require_owner("enter the PRISMA numbers")
            found.project.prisma_entries = entries.model_dump(mode="json")
            found.project.updated_at = utcnow()

    async def suggestion(self, project_id: uuid.UUID, record_id: uuid.UUID) -> Suggestion | None:
        async with self.database.session() as session:
            row = await session.scalar(
                select(ScreeningSuggestionRow).where(
                    ScreeningSuggestionRow.project_id == project_id,
                    ScreeningSuggestionRow.record_id == record_id,
                )
            )
            return Suggestion.model_validate(row.suggestion) if row is not None else None

    async def save_suggestion(
        self, owner_id: uuid.UUID, project_id: uuid.UUID, record_id: uuid.UUID, value: Suggestion
    ) -> None:
        """Keeps a model's suggestion (owned by the project's owner); the first one kept wins."""
        try:
            async with self.database.session(write=True) as session:
                exists = await session.scalar(
                    select(ScreeningSuggestionRow.id).where(
                        ScreeningSuggestionRow.project_id == project_id,
                        ScreeningSuggestionRow.record_id == record_id,
                    )
                )
                if exists is None:
                    OwnerScope(session, owner_id).add(
                        ScreeningSuggestionRow(
                            project_id=project_id,
                            record_id=record_id,
                            suggestion=value.model_dump(mode="json"),
                        )
                    )
        except IntegrityError:  # another reviewer's request kept one first
            return

    async def usernames(self, user_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
        if not user_ids:
            return {}
        async with self.database.session() as session:
            rows = await session.execute(
                select(User.id, User.username).where(User.id.in_(list(user_ids)))
            )
            return {user_id: name for user_id, name in rows}
