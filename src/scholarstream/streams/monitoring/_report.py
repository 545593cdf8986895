"""What a monitoring run writes: the report (new items ranked with a reason, grouped by
focus area and competitor, counts, a publication timeline) and each source's outcome."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.notify import Delivery
from scholarstream.papers import Record
from scholarstream.search.core import ModelFallback
from scholarstream.sources import DateKind

RunStatus = Literal["running", "complete", "partial", "failed"]
GroupKind = Literal["focus_area", "competitor"]
ScorerName = Literal["lexical", "model"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceOutcome(_Model):
    """How one source fared in a run; a source that failed is recorded, never hidden."""

    source: str
    ok: bool
    found: int = Field(default=0, description="Records the source returned.")
    new: int = Field(default=0, description="Items of the report this source returned.")
    total: int | None = Field(default=None, description="Matches in the whole source.")
    elapsed_ms: int = 0
    error_code: str | None = None
    error: str | None = None
    hint: str | None = None
    since: dt.datetime | None = Field(
        default=None,
        description="The start of this source's window: the start of the last run that "
        "searched it successfully (a source that failed keeps its window), or the first "
        "run's default window.",
    )
    date_from: dt.date | None = Field(
        default=None,
        description="The date the search started from: the window's start when the source "
        "filters by the date it added a record, else the window's start less the "
        "publication look-back.",
    )
    dates: DateKind | None = Field(
        default=None,
        description="added: the source was searched by when it added a record (PubMed's "
        "Entrez date, ...); published: by publication date (it has no such filter).",
    )


class ReportItem(_Model):
    key: str = Field(description="The record key (search.keys.paper_key) of the merged record.")
    record: Record
    score: float = Field(ge=0.0, le=1.0)
    reason: str = Field(description="One line: why it is relevant to the stream.")
    sources: list[str] = Field(description="Sources that returned it.")
    focus_areas: list[str] = Field(default_factory=list, description="Focus areas it mentions.")
    competitors: list[str] = Field(default_factory=list, description="Competitors it names.")
    keywords: list[str] = Field(default_factory=list, description="Keywords it mentions.")
    feedback: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="How likely relevant the items you marked earlier make it (0-1); "
        "none until you marked at least one item relevant and one irrelevant.",
    )


class ReportGroup(_Model):
    kind: GroupKind
    name: str
    item_keys: list[str] = Field(description="Best first; an item may be in several groups.")


class ReportCounts(_Model):
    found: int = Field(description="Records every source returned, copies included.")
    distinct: int = Field(description="Works once duplicates within the run were merged.")
    duplicates_dropped: int = Field(description="Copies merged within the run.")
    already_reported: int = Field(description="Works an earlier report of the stream listed.")
    new: int = Field(description="Items of this report.")
    by_source: dict[str, int] = Field(description="Records each source returned.")


class TimelineBucket(_Model):
    period: str = Field(description="'2024' or '2024-03'.")
    count: int


class Timeline(_Model):
    """Publication dates of the report's items, ready for a bar chart."""

    by_year: list[TimelineBucket] = Field(default_factory=list)
    by_month: list[TimelineBucket] = Field(
        default_factory=list, description="Only items whose full date is known."
    )
    undated: int = 0


class Report(_Model):
    stream_id: uuid.UUID
    stream_name: str
    since: dt.date = Field(
        description="The earliest window start of the run's sources (each source's own "
        "window is in its outcome)."
    )
    scorer: ScorerName = Field(
        default="lexical",
        description="lexical: offline relevance (BM25 + coverage, fused with closeness in "
        "meaning when the embedding model is on), no model calls; "
        "model: the fast model judged each item (items it could not judge are scored "
        "offline, and their reason says so).",
    )
    feedback_used: int = Field(
        default=0, description="Items marked relevant or irrelevant the ranking learnt from."
    )
    fallbacks: list[ModelFallback] = Field(
        default_factory=list,
        description="The AI steps that used their offline counterpart in this run (model "
        "relevance: items scored offline), one per step, in plain words.",
    )
    items: list[ReportItem] = Field(default_factory=list, description="Best first.")
    groups: list[ReportGroup] = Field(default_factory=list)
    ungrouped: list[str] = Field(
        default_factory=list, description="Keys of items matching no focus area or competitor."
    )
    counts: ReportCounts
    timeline: Timeline = Field(default_factory=Timeline)


class RunResult(_Model):
    """A run's outcome before it is stored."""

    status: RunStatus
    report: Report
    sources: list[SourceOutcome]
    reported_keys: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Each item's key -> every key it is known by (stored for later runs).",
    )


class StoredReport(_Model):
    id: uuid.UUID
    stream_id: uuid.UUID
    status: RunStatus
    started_at: dt.datetime
    finished_at: dt.datetime | None
    since: dt.datetime
    report: Report | None
    sources: list[SourceOutcome]
    error: str | None = None
    notifications: list[Delivery] = Field(
        default_factory=list,
        description="Each notification target the run was announced to, and how it went.",
    )
    first: bool = Field(
        default=False,
        description="No earlier run of the stream wrote a report: this one is what the "
        "stream found in its first window, not what is new since a previous report.",
    )


class ReportSummary(_Model):
    id: uuid.UUID
    stream_id: uuid.UUID
    status: RunStatus
    started_at: dt.datetime
    finished_at: dt.datetime | None
    since: dt.datetime
    counts: ReportCounts | None
    failed_sources: list[str]
    first: bool = Field(default=False, description="The stream's first report (see StoredReport).")


class ReportList(_Model):
    reports: list[ReportSummary] = Field(description="Newest first.")
