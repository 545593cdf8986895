"""Searching ClinicalTrials.gov for registered studies."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from scholarstream.chat._builtin_payloads import (
    TRIAL_SEARCH_RESULTS,
    Phase,
    Status,
    TrialCard,
    TrialQuery,
    TrialSearchResults,
)
from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolResult, register_tool
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._records import list_entry, record_url, snippet
from scholarstream.chat.tools.builtin._user_words import counted, failure, quoted, source_label
from scholarstream.papers import Trial
from scholarstream.sources import CLINICALTRIALS, SearchQuery

TERM_FIELDS = ("query", "condition", "intervention", "sponsor")


class TrialArgs(ToolArguments):
    """At least one of query, condition, intervention, sponsor: checked when parsed, not by
    a top-level ``anyOf`` in the schema, which some providers refuse in tool schemas."""

    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=2000,
        description='Any terms, ClinicalTrials.gov syntax: words, "phrases", AND, OR, NOT, '
        "e.g. (pembrolizumab OR nivolumab) AND adjuvant.",
    )
    condition: str | None = Field(
        default=None, min_length=1, max_length=300, description="The disease or condition."
    )
    intervention: str | None = Field(
        default=None, min_length=1, max_length=300, description="A drug, device or procedure."
    )
    sponsor: str | None = Field(
        default=None, min_length=1, max_length=300, description="Lead sponsor or collaborator."
    )
    phases: list[Phase] = Field(default_factory=list, description="Any of these phases.")
    statuses: list[Status] = Field(
        default_factory=list, description="Any of these overall statuses."
    )
    start_from: dt.date | None = Field(default=None, description="Studies starting on or after.")
    start_to: dt.date | None = Field(default=None, description="Studies starting on or before.")
    # The conversation's years, as every retrieval tool takes them: a study's start year
    # (when start_from / start_to are not given).
    year_from: int | None = Field(
        default=None, ge=1900, le=2999, description="Studies starting in or after this year."
    )
    year_to: int | None = Field(
        default=None, ge=1900, le=2999, description="Studies starting in or before this year."
    )
    max_results: int = Field(default=20, ge=1, le=50, description="Studies to return.")

    @model_validator(mode="after")
    def _something_to_search(self) -> TrialArgs:
        if not any(getattr(self, name) for name in TERM_FIELDS):
            raise ValueError(f"give at least one of {', '.join(TERM_FIELDS)}")
        if self.start_from and self.start_to and self.start_from > self.start_to:
            raise ValueError("start_from is after start_to; swap them")
        if self.year_from and self.year_to and self.year_from > self.year_to:
            raise ValueError("year_from is after year_to; swap them")
        start, end = self.starts
        if start and end and start > end:
            raise ValueError("the start dates are the wrong way round; swap them")
        return self

    @property
    def starts(self) -> tuple[dt.date | None, dt.date | None]:
        """The start-date range searched: the dates given, else the years."""
        start = self.start_from or (dt.date(self.year_from, 1, 1) if self.year_from else None)
        end = self.start_to or (dt.date(self.year_to, 12, 31) if self.year_to else None)
        return start, end

    def search_query(self) -> SearchQuery:
        # The API needs a general term: without one, the first other term is searched as it
        # too (as the Trials page does).
        text = next(value for name in TERM_FIELDS if (value := getattr(self, name)))
        filters = {
            name: value
            for name, value in (
                ("condition", self.condition),
                ("intervention", self.intervention),
                ("sponsor", self.sponsor),
                ("phase", ",".join(self.phases)),
                ("status", ",".join(self.statuses)),
            )
            if value
        }
        date_from, date_to = self.starts
        return SearchQuery(
            text=text,
            limit=self.max_results,
            date_from=date_from,
            date_to=date_to,
            filters=filters,
        )


def _card(trial: Trial) -> TrialCard:
    return TrialCard(
        nct_id=trial.ids.nct_id or "",
        title=trial.title,
        status=trial.status,
        phases=trial.phases,
        study_type=trial.study_type,
        conditions=trial.conditions,
        interventions=[item.name for item in trial.interventions],
        sponsor=trial.sponsor,
        enrollment=trial.enrollment,
        start_date=trial.start_date,
        summary_snippet=snippet(trial.summary),
        url=record_url(trial) or "",
    )


async def search_trials(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("search_trials", TrialArgs, params)
    page = await ctx.services.sources.get(CLINICALTRIALS).search(args.search_query())
    trials = [r for r in page.records if isinstance(r, Trial) and r.ids.nct_id]
    trials = trials[: args.max_results]
    data = TrialSearchResults(
        query=TrialQuery(
            terms=args.query,
            condition=args.condition,
            intervention=args.intervention,
            sponsor=args.sponsor,
            phases=list(args.phases),
            statuses=list(args.statuses),
            start_from=args.start_from,
            start_to=args.start_to,
        ),
        total=page.total,
        next_page_token=page.next_page_token,
        trials=[_card(trial) for trial in trials],
    )
    total = "an unknown number of" if page.total is None else f"{page.total:,}"
    lines = [f"ClinicalTrials.gov: {total} studies match; the first {len(trials)}:"]
    lines += [list_entry(ctx.evidence.key_for(trial, "clinicaltrials"), trial) for trial in trials]
    if not trials:
        lines.append("No studies. Suggest fewer filters or broader terms.")
    sent = args.search_query()
    return ToolResult(
        text="\n".join(lines),
        for_user=_for_user(ctx, sent.text, page.total, len(trials)),
        payload=TRIAL_SEARCH_RESULTS.payload(data.model_dump(mode="json")),
        queries=[
            QuerySent(
                tool="search_trials",
                query=" ".join([sent.text, *(f"{k}={v}" for k, v in sent.filters.items())]),
                source=CLINICALTRIALS,
                results=page.total if page.total is not None else len(trials),
            )
        ],
    )


def _for_user(ctx: ToolContext, terms: str, total: int | None, shown: int) -> str:
    where = source_label(ctx, CLINICALTRIALS)
    if not shown:
        return f"Nothing was found for {quoted(terms)} on {where}. Try fewer or broader words."
    if total is None or total <= shown:
        return f"Found {counted(shown, 'study')} on {where}."
    return f"Found {counted(total, 'study')} on {where}; the first {shown} are listed."


def _failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    return failure([source_label(ctx, CLINICALTRIALS)], error)


SEARCH_TRIALS = register_tool(
    ToolConfig(
        name="search_trials",
        description="Search ClinicalTrials.gov for registered clinical studies by condition, "
        "intervention, sponsor and any terms (at least one of query, condition, intervention, "
        "sponsor), narrowed by phase, overall status and start date. Returns NCT id, title, "
        "status, phases, conditions, interventions, sponsor, enrolment and start date of "
        "each study, and the total number of matches.",
        input_schema=input_schema(TrialArgs),
        executor=search_trials,
        category="research",
        payload_type=TRIAL_SEARCH_RESULTS.name,
        command="trials",
        command_argument="query",
        query_argument="query",
        command_summary="Search ClinicalTrials.gov for registered studies",
        failure_for_user=_failed,
    )
)
