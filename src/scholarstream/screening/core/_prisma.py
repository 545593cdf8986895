"""The PRISMA 2020 flow's counts, from what the project records and what the reviewer
entered: records identified per source, removed before screening, screened, excluded
(with reasons), sought for retrieval, not retrieved, assessed in full text, excluded then
(with reasons), and the studies included. A count the project cannot know and the
reviewer did not enter is ``None`` ("not recorded"), never a guess."""

from __future__ import annotations

import csv
import io
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scholarstream.screening.core._decisions import OutcomeKind, Outcomes
from scholarstream.screening.core._models import DecisionEvent, Identification, SourceCount

NO_REASON = "No reason given"
UNDECIDED_KINDS: tuple[OutcomeKind, ...] = ("maybe", "conflict", "awaiting", "unscreened")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReasonCount(_Model):
    reason: str
    records: int


class PrismaEntries(_Model):
    """Numbers the reviewer enters for what the tool does not record (each optional; an
    entered number is used only where the project has no record-level count of its own)."""

    other_sources: list[SourceCount] = Field(
        default_factory=list,
        description="Records identified elsewhere (registers, other databases searched "
        "outside ScholarStream), per source.",
    )
    duplicates_removed: int | None = Field(default=None, ge=0)
    automation_excluded: int | None = Field(
        default=None, ge=0, description="Records marked as ineligible by automation tools."
    )
    other_removed: int | None = Field(
        default=None, ge=0, description="Records removed before screening for other reasons."
    )
    reports_not_retrieved: int | None = Field(default=None, ge=0)
    fulltext_excluded: list[ReasonCount] = Field(
        default_factory=list,
        description="Reports excluded after reading the full text, per reason.",
    )
    studies_included: int | None = Field(default=None, ge=0)
    reports_included: int | None = Field(
        default=None, ge=0, description="Reports of the included studies."
    )

    @field_validator("other_sources", mode="after")
    @classmethod
    def _sources(cls, value: list[SourceCount]) -> list[SourceCount]:
        if len(value) > 30:
            raise ValueError("give at most 30 other sources")
        return value

    @field_validator("fulltext_excluded", mode="after")
    @classmethod
    def _reasons(cls, value: list[ReasonCount]) -> list[ReasonCount]:
        if len(value) > 30:
            raise ValueError("give at most 30 full-text exclusion reasons")
        return value


class PrismaCounts(_Model):
    identified: list[SourceCount]
    identified_total: int
    duplicates_removed: int | None
    automation_excluded: int | None
    other_removed: int | None
    screened: int = Field(description="Records at least one reviewer decided.")
    excluded: int
    excluded_reasons: list[ReasonCount]
    undecided: dict[str, int] = Field(
        description="Screened or not, records without an outcome yet: maybe, conflict, "
        "awaiting (another reviewer), unscreened."
    )
    sought: int = Field(description="Reports sought for retrieval: records included on screening.")
    not_retrieved: int | None
    assessed: int | None
    fulltext_excluded: int | None
    fulltext_reasons: list[ReasonCount]
    fulltext_pending: int = Field(
        description="Records sought with no full-text decision yet (record-level decisions)."
    )
    studies_included: int | None
    reports_included: int | None
    fulltext_recorded: bool = Field(
        description="True when full-text counts come from decisions on records, False when "
        "from entered numbers (or not recorded)."
    )


def _reasons(values: Sequence[str | None]) -> list[ReasonCount]:
    counts = Counter(value or NO_REASON for value in values)
    return [ReasonCount(reason=r, records=n) for r, n in counts.most_common()]


def prisma_counts(
    identification: Identification,
    entries: PrismaEntries,
    outcomes: Outcomes,
    fulltext: Mapping[uuid.UUID, DecisionEvent],
) -> PrismaCounts:
    """``fulltext``: record id -> its current full-text decision."""
    identified = [*identification.sources, *entries.other_sources]
    excluded = outcomes.of("exclude")
    sought_ids = [item.record_id for item in outcomes.of("include")]
    decided = [fulltext[r] for r in sought_ids if r in fulltext]
    recorded = bool(decided)
    if recorded:
        not_retrieved: int | None = sum(1 for e in decided if e.decision == "not_retrieved")
        ft_excluded = [e for e in decided if e.decision == "exclude"]
        fulltext_reasons = _reasons([e.reason for e in ft_excluded])
        fulltext_excluded: int | None = len(ft_excluded)
        reports: int | None = sum(1 for e in decided if e.decision == "include")
        assessed: int | None = len(decided) - (not_retrieved or 0)
    else:
        not_retrieved = entries.reports_not_retrieved
        fulltext_reasons = [r for r in entries.fulltext_excluded if r.records > 0]
        fulltext_excluded = sum(r.records for r in fulltext_reasons) if fulltext_reasons else None
        reports = entries.reports_included
        assessed = len(sought_ids) - not_retrieved if not_retrieved is not None else None
        if assessed is not None and assessed < 0:
            assessed = None
    undecided = {kind: outcomes.count(kind) for kind in UNDECIDED_KINDS}
    return PrismaCounts(
        identified=identified,
        identified_total=sum(s.records for s in identified),
        duplicates_removed=(
            entries.duplicates_removed
            if entries.duplicates_removed is not None
            else identification.duplicates_removed
        ),
        automation_excluded=entries.automation_excluded,
        other_removed=(
            entries.other_removed
            if entries.other_removed is not None
            else identification.other_removed
        ),
        screened=outcomes.screened,
        excluded=len(excluded),
        excluded_reasons=_reasons([item.reason for item in excluded]),
        undecided={k: v for k, v in undecided.items() if v},
        sought=len(sought_ids),
        not_retrieved=not_retrieved,
        assessed=assessed,
        fulltext_excluded=fulltext_excluded,
        fulltext_reasons=fulltext_reasons,
        fulltext_pending=len(sought_ids) - len(decided) if recorded else 0,
        studies_included=entries.studies_included,
        reports_included=reports,
        fulltext_recorded=recorded,
    )


def _n(value: int | None) -> str:
    return "" if value is None else str(value)


def prisma_csv(counts: PrismaCounts) -> str:
    """The counts as CSV rows ``stage,item,records`` (an empty cell: not recorded)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["stage", "item", "records"])
    for source in counts.identified:
        writer.writerow(["identification", f"Records identified: {source.source}", source.records])
    writer.writerow(["identification", "Records identified (total)", counts.identified_total])
    writer.writerow(["identification", "Duplicate records removed", _n(counts.duplicates_removed)])
    writer.writerow(
        [
            "identification",
            "Records marked as ineligible by automation tools",
            _n(counts.automation_excluded),
        ]
    )
    writer.writerow(
        ["identification", "Records removed for other reasons", _n(counts.other_removed)]
    )
    writer.writerow(["screening", "Records screened", counts.screened])
    writer.writerow(["screening", "Records excluded", counts.excluded])
    for reason in counts.excluded_reasons:
        writer.writerow(["screening", f"Records excluded: {reason.reason}", reason.records])
    for kind, value in counts.undecided.items():
        writer.writerow(["screening", f"Not decided yet: {UNDECIDED_WORDS[kind]}", value])
    writer.writerow(["screening", "Reports sought for retrieval", counts.sought])
    writer.writerow(["screening", "Reports not retrieved", _n(counts.not_retrieved)])
    writer.writerow(["eligibility", "Reports assessed for eligibility", _n(counts.assessed)])
    writer.writerow(["eligibility", "Reports excluded", _n(counts.fulltext_excluded)])
    for reason in counts.fulltext_reasons:
        writer.writerow(["eligibility", f"Reports excluded: {reason.reason}", reason.records])
    if counts.fulltext_pending:
        writer.writerow(["eligibility", "Awaiting a full-text decision", counts.fulltext_pending])
    writer.writerow(["included", "Studies included in review", _n(counts.studies_included)])
    writer.writerow(["included", "Reports of included studies", _n(counts.reports_included)])
    return out.getvalue()


UNDECIDED_WORDS: dict[str, str] = {
    "maybe": "marked maybe",
    "conflict": "reviewers disagree",
    "awaiting": "awaiting another reviewer",
    "unscreened": "not screened",
}
