"""The user's relevance judgements of reported items. Marking an item relevant or
irrelevant in a report stores the judgement with the item's record; every later run of the
stream learns from all of them (``labelled``), through the paper search's
relevance-feedback model."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from sqlalchemy import select

from scholarstream.db import Database, OwnerScope, utcnow
from scholarstream.db.tables import StreamItemFeedbackRow, StreamReportRow
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.papers import Record
from scholarstream.search.core import LabelledPaper
from scholarstream.streams.monitoring._report import Report

_record: TypeAdapter[Record] = TypeAdapter(Record)


class ItemJudgement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=300, description="The report item's key.")
    relevant: bool | None = Field(
        description="true: relevant, false: not relevant, null: take the judgement back."
    )


class ReportFeedback(BaseModel):
    """The user's judgements of one report's items: key -> relevant."""

    report_id: uuid.UUID
    judgements: dict[str, bool]
    stream_judgements: int = Field(
        description="Judgements across the stream's reports that its next run learns from."
    )


class FeedbackStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def mark(
        self,
        owner_id: uuid.UUID,
        stream_id: uuid.UUID,
        report_id: uuid.UUID,
        judgement: ItemJudgement,
    ) -> ReportFeedback:
        """Stores (or, with ``relevant`` null, removes) the judgement of one item of the
        report; ``NotFoundError`` for an item the report does not list."""
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            report = await _report(scope, stream_id, report_id)
            if report.report is None:
                raise ConflictError(
                    "This run has no report to judge (it is still running, or it broke).",
                    hint="Judge the items of a report whose status is complete or partial.",
                )
            items = {item.key: item for item in Report.model_validate(report.report).items}
            if judgement.key not in items:
                raise NotFoundError(
                    f"Report {report_id} has no item {judgement.key!r}.",
                    hint="Use an item key from the report (GET .../reports/{id}).",
                )
            row = await session.scalar(
                scope.select(StreamItemFeedbackRow).where(
                    StreamItemFeedbackRow.stream_id == stream_id,
                    StreamItemFeedbackRow.key == judgement.key,
                )
            )
            if judgement.relevant is None:
                if row is not None:
                    await session.delete(row)
            elif row is None:
                scope.add(
                    StreamItemFeedbackRow(
                        stream_id=stream_id,
                        key=judgement.key,
                        report_id=report_id,
                        relevant=judgement.relevant,
                        record=items[judgement.key].record.model_dump(mode="json"),
                    )
                )
            else:
                row.relevant = judgement.relevant
                row.judged_at = utcnow()
            await session.flush()
            return await _feedback(scope, stream_id, report_id)

    async def of_report(
        self, owner_id: uuid.UUID, stream_id: uuid.UUID, report_id: uuid.UUID
    ) -> ReportFeedback:
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            await _report(scope, stream_id, report_id)
            return await _feedback(scope, stream_id, report_id)


async def _report(scope: OwnerScope, stream_id: uuid.UUID, report_id: uuid.UUID) -> StreamReportRow:
    row = await scope.session.scalar(
        scope.select(StreamReportRow).where(
            StreamReportRow.id == report_id, StreamReportRow.stream_id == stream_id
        )
    )
    if row is None:
        raise NotFoundError(
            f"Report {report_id} of stream {stream_id} was not found.",
            hint="List the stream's reports (GET /api/v1/streams/{id}/reports).",
        )
    return row


async def _feedback(
    scope: OwnerScope, stream_id: uuid.UUID, report_id: uuid.UUID
) -> ReportFeedback:
    rows = (
        await scope.session.execute(
            select(
                StreamItemFeedbackRow.key,
                StreamItemFeedbackRow.relevant,
                StreamItemFeedbackRow.report_id,
            ).where(
                StreamItemFeedbackRow.owner_id == scope.owner_id,
                StreamItemFeedbackRow.stream_id == stream_id,
            )
        )
    ).all()
    return ReportFeedback(
        report_id=report_id,
        judgements={key: relevant for key, relevant, rid in rows if rid == report_id},
        stream_judgements=len(rows),
    )


async def labelled_items(scope: OwnerScope, stream_id: uuid.UUID) -> list[LabelledPaper]:
    """Every judgement of the stream's items, oldest first, for the next run to learn from."""
    rows = await scope.session.scalars(
        scope.select(StreamItemFeedbackRow)
        .where(StreamItemFeedbackRow.stream_id == stream_id)
        .order_by(StreamItemFeedbackRow.judged_at, StreamItemFeedbackRow.key)
    )
    return [
        LabelledPaper(id=row.key, record=_record.validate_python(row.record), relevant=row.relevant)
        for row in rows
    ]
