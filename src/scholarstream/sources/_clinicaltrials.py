"""ClinicalTrials.gov through its API v2 (``/api/v2/studies``), as ``Trial`` records.

Search pages are cursor-paged (``nextPageToken``, passed back unchanged as the page
token). Phase, study type and the start-date range go into one ``filter.advanced``
Essie expression, because the API has no plain parameter for them. No API key exists;
ClinicalTrials.gov asks for about 50 requests a minute per IP address, and that is the
rate kept here.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
from collections.abc import Sequence
from typing import Literal, get_args

import httpx
from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from scholarstream.errors import SourceQueryError
from scholarstream.papers import (
    Identifiers,
    Intervention,
    Link,
    Outcome,
    Provenance,
    Record,
    Trial,
    normalize_nct_id,
)
from scholarstream.sources._base import (
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    check_filters,
    register_source,
)
from scholarstream.sources._responses import (
    ResponseModel,
    json_object,
    json_value,
    unreadable,
    validate,
)

logger = logging.getLogger(__name__)

NAME = "clinicaltrials"
LABEL = "ClinicalTrials.gov"
STUDIES_URL = "https://clinicaltrials.gov/api/v2/studies"
STUDY_PAGE = "https://clinicaltrials.gov/study/{nct_id}"
PER_SECOND = 50 / 60
"""ClinicalTrials.gov's documented limit: about 50 requests a minute per IP address."""

TrialStatus = Literal[
    "ACTIVE_NOT_RECRUITING",
    "COMPLETED",
    "ENROLLING_BY_INVITATION",
    "NOT_YET_RECRUITING",
    "RECRUITING",
    "SUSPENDED",
    "TERMINATED",
    "WITHDRAWN",
    "AVAILABLE",
    "NO_LONGER_AVAILABLE",
    "TEMPORARILY_NOT_AVAILABLE",
    "APPROVED_FOR_MARKETING",
    "WITHHELD",
    "UNKNOWN",
]
TrialPhase = Literal["EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA"]
STATUSES: tuple[str, ...] = get_args(TrialStatus)
PHASES: tuple[str, ...] = get_args(TrialPhase)
STUDY_TYPES = ("INTERVENTIONAL", "OBSERVATIONAL", "EXPANDED_ACCESS")

FILTERS: dict[str, str] = {
    "condition": "Condition or disease, e.g. 'atopic dermatitis' (query.cond).",
    "intervention": "Drug, device or other intervention, e.g. 'dupilumab' (query.intr).",
    "sponsor": "Sponsor or collaborator, e.g. 'Regeneron' (query.spons).",
    "status": "Overall status, one or several comma-separated: "
    + ", ".join(STATUSES)
    + " (case and spaces do not matter: 'not yet recruiting').",
    "phase": "Phase, one or several comma-separated: 1, 2, 3, 4, early 1 or NA (also PHASE2 ...).",
    "study_type": "interventional, observational or expanded_access.",
}

QUERY_SYNTAX = (
    "ClinicalTrials.gov's Essie syntax, searched over all study fields (query.term): words "
    'and "quoted phrases", AND, OR, NOT and parentheses, e.g. '
    '(pembrolizumab OR nivolumab) AND "non-small cell lung cancer". NCT ids match their '
    "study. AREA[Field]value targets one field, e.g. AREA[LocationCountry]Germany. Use the "
    "condition, intervention, sponsor, status, phase and study_type filters for the "
    "common narrowing; the date range applies to the study start date."
)

_NON_WORD = re.compile(r"[\s\-]+")
_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


# --- the API's study shape (the parts read here) -------------------------------------


class _Api(ResponseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class _DateStruct(_Api):
    date: str | None = None


class _Identification(_Api):
    nct_id: str | None = None
    brief_title: str | None = None
    official_title: str | None = None


class _Status(_Api):
    overall_status: str | None = None
    start_date_struct: _DateStruct | None = None
    primary_completion_date_struct: _DateStruct | None = None
    completion_date_struct: _DateStruct | None = None
    study_first_post_date_struct: _DateStruct | None = None
    last_update_post_date_struct: _DateStruct | None = None


class _Named(_Api):
    name: str | None = None


class _Sponsors(_Api):
    lead_sponsor: _Named | None = None
    collaborators: list[_Named] = Field(default_factory=list)


class _Description(_Api):
    brief_summary: str | None = None


class _Conditions(_Api):
    conditions: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class _Enrollment(_Api):
    count: int | None = None


class _Design(_Api):
    study_type: str | None = None
    phases: list[str] = Field(default_factory=list)
    enrollment_info: _Enrollment | None = None


class _Intervention(_Api):
    type: str | None = None
    name: str | None = None


class _Arms(_Api):
    interventions: list[_Intervention] = Field(default_factory=list)


class _Outcome(_Api):
    measure: str | None = None
    time_frame: str | None = None
    description: str | None = None


class _Outcomes(_Api):
    primary_outcomes: list[_Outcome] = Field(default_factory=list)


class _Protocol(_Api):
    identification_module: _Identification = Field(default_factory=_Identification)
    status_module: _Status = Field(default_factory=_Status)
    sponsor_collaborators_module: _Sponsors = Field(default_factory=_Sponsors)
    description_module: _Description = Field(default_factory=_Description)
    conditions_module: _Conditions = Field(default_factory=_Conditions)
    design_module: _Design = Field(default_factory=_Design)
    arms_interventions_module: _Arms = Field(default_factory=_Arms)
    outcomes_module: _Outcomes = Field(default_factory=_Outcomes)


class _Mesh(_Api):
    term: str | None = None


class _Browse(_Api):
    meshes: list[_Mesh] = Field(default_factory=list)


class _Derived(_Api):
    condition_browse_module: _Browse = Field(default_factory=_Browse)


class _Study(_Api):
    protocol_section: _Protocol = Field(default_factory=_Protocol)
    derived_section: _Derived = Field(default_factory=_Derived)
    has_results: bool = False


class _SearchAnswer(_Api):
    # Every page has its studies, even an empty one: a body without them is not a page.
    studies: list[object]
    next_page_token: str | None = None
    total_count: int | None = None


# --- the source ----------------------------------------------------------------------


class ClinicalTrialsSource:
    """ClinicalTrials.gov, API v2."""

    def __init__(self, context: SourceContext) -> None:
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="The U.S. National Library of Medicine's registry of clinical "
            "studies worldwide: status, phases, conditions, interventions, sponsors, "
            "enrolment, dates and primary outcomes.",
            record_kind="trials",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="none",
            configured=True,
            rate_limit="About 50 requests a minute (ClinicalTrials.gov's documented limit "
            "per IP address).",
            added_date=ADDED_DATE,
        )

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        response = await self._http.get(
            NAME, STUDIES_URL, per_second=PER_SECOND, params=search_params(query), label=LABEL
        )
        answer = _search_answer(response)
        return SearchPage(
            source=NAME,
            records=[trial for trial in map(_trial_or_none, answer.studies) if trial],
            total=answer.total_count,
            next_page_token=answer.next_page_token or None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """One request per NCT id (they share the rate limit); ids ClinicalTrials.gov
        does not know (404) are left out, as are strings that are no NCT id."""
        nct_ids = list(dict.fromkeys(n for n in map(normalize_nct_id, ids) if n))
        trials = await asyncio.gather(*(self._fetch_one(nct_id) for nct_id in nct_ids))
        return [trial for trial in trials if trial is not None]

    async def _fetch_one(self, nct_id: str) -> Trial | None:
        response = await self._http.get(
            NAME,
            f"{STUDIES_URL}/{nct_id}",
            per_second=PER_SECOND,
            accept_status=(404,),
            label=LABEL,
        )
        if response.status_code == 404:
            return None
        body = json_object(NAME, LABEL, response)
        if "protocolSection" not in body:
            # Not a study at all (an error object, say): leaving it out would pass a broken
            # answer off as an unknown id.
            raise unreadable(NAME, LABEL, "JSON without the 'protocolSection' every study has")
        return _trial_or_none(body)


@register_source(NAME)
def build(context: SourceContext) -> ClinicalTrialsSource:
    return ClinicalTrialsSource(context)


# --- query ---------------------------------------------------------------------------


def search_params(query: SearchQuery) -> dict[str, str | int | None]:
    """The ``/studies`` parameters of a search."""
    filters = query.filters
    advanced = [
        *_phase_clause(filters.get("phase")),
        *_study_type_clause(filters.get("study_type")),
        *_date_clause(query.date_from, query.date_to, _DATE_FIELDS[query.dates]),
    ]
    return {
        "format": "json",
        "query.term": query.text,
        "query.cond": filters.get("condition"),
        "query.intr": filters.get("intervention"),
        "query.spons": filters.get("sponsor"),
        "filter.overallStatus": _statuses(filters.get("status")),
        "filter.advanced": " AND ".join(advanced) or None,
        "countTotal": "true",
        "pageSize": query.limit,
        "pageToken": query.page_token,
    }


def _code(value: str) -> str:
    """``"not yet recruiting"`` -> ``"NOT_YET_RECRUITING"``."""
    return _NON_WORD.sub("_", value.strip()).upper()


def _statuses(value: str | None) -> str | None:
    if value is None:
        return None
    codes = [_code(part) for part in value.split(",") if part.strip()]
    unknown = [code for code in codes if code not in STATUSES]
    if unknown or not codes:
        raise SourceQueryError(
            NAME,
            f"ClinicalTrials.gov has no status {', '.join(unknown) or repr(value)}.",
            hint=f"Statuses: {', '.join(STATUSES)}.",
        )
    return ",".join(codes)


def _phase_code(value: str) -> str | None:
    code = _code(value).replace("PHASE_", "PHASE")
    if code.isdigit():
        code = f"PHASE{code}"
    code = {"EARLY_1": "EARLY_PHASE1", "EARLY_PHASE_1": "EARLY_PHASE1", "N/A": "NA"}.get(code, code)
    return code if code in PHASES else None


def _phase_clause(value: str | None) -> list[str]:
    if value is None:
        return []
    parts = [part for part in value.split(",") if part.strip()]
    codes = [_phase_code(part) for part in parts]
    if not parts or None in codes:
        raise SourceQueryError(
            NAME,
            f"ClinicalTrials.gov has no phase {value!r}.",
            hint="Phases: 1, 2, 3, 4, early 1, NA (several comma-separated).",
        )
    areas = [f"AREA[Phase]{code}" for code in codes if code]
    return [areas[0] if len(areas) == 1 else f"({' OR '.join(areas)})"]


def _study_type_clause(value: str | None) -> list[str]:
    if value is None:
        return []
    code = _code(value)
    if code not in STUDY_TYPES:
        raise SourceQueryError(
            NAME,
            f"ClinicalTrials.gov has no study type {value!r}.",
            hint="Study types: interventional, observational, expanded_access.",
        )
    return [f"AREA[StudyType]{code}"]


ADDED_DATE = "first posted date: when the registry first published the study"
_DATE_FIELDS = {"published": "StartDate", "added": "StudyFirstPostDate"}
"""A registration has no publication date: its dates are the study's start
(``StartDate``, the default) and the day the registry first posted it
(``StudyFirstPostDate``, for ``dates='added'``)."""


def _date_clause(start: dt.date | None, end: dt.date | None, field: str) -> list[str]:
    if start is None and end is None:
        return []
    low = start.isoformat() if start else "MIN"
    high = end.isoformat() if end else "MAX"
    return [f"AREA[{field}]RANGE[{low},{high}]"]


# --- answers -------------------------------------------------------------------------


def _search_answer(response: httpx.Response) -> _SearchAnswer:
    return validate(NAME, LABEL, _SearchAnswer, json_value(NAME, LABEL, response))


def _trial_or_none(study: object) -> Trial | None:
    """A study as a Trial; a study without an NCT id or title, or in an unexpected
    shape, is logged and left out rather than failing its whole page."""
    try:
        return trial_from_study(study)
    except ValueError as exc:  # pydantic's ValidationError included
        logger.warning("clinicaltrials: a study was left out: %s", exc)
        return None


def trial_from_study(data: object) -> Trial:
    """One study of the API (a ``/studies/{nctId}`` body or an item of a search page).
    Raises ``ValueError`` when it has no NCT id or title or is not a study."""
    study = _Study.model_validate(data)
    protocol = study.protocol_section
    ident = protocol.identification_module
    nct_id = normalize_nct_id(ident.nct_id)
    title = (ident.brief_title or ident.official_title or "").strip()
    if nct_id is None or not title:
        raise ValueError(f"study {ident.nct_id or '(no NCT id)'} has no NCT id or no title")
    status = protocol.status_module
    sponsors = protocol.sponsor_collaborators_module
    design = protocol.design_module
    return Trial(
        record_id=nct_id,
        ids=Identifiers(nct_id=nct_id),
        title=title,
        official_title=ident.official_title,
        summary=protocol.description_module.brief_summary,
        status=status.overall_status,
        phases=design.phases,
        study_type=design.study_type,
        conditions=protocol.conditions_module.conditions,
        interventions=[
            Intervention(name=item.name, type=item.type)
            for item in protocol.arms_interventions_module.interventions
            if item.name
        ],
        sponsor=sponsors.lead_sponsor.name if sponsors.lead_sponsor else None,
        collaborators=[c.name for c in sponsors.collaborators if c.name],
        enrollment=design.enrollment_info.count if design.enrollment_info else None,
        start_date=_date(status.start_date_struct),
        primary_completion_date=_date(status.primary_completion_date_struct),
        completion_date=_date(status.completion_date_struct),
        first_posted=_date(status.study_first_post_date_struct),
        last_updated=_date(status.last_update_post_date_struct),
        primary_outcomes=[
            Outcome(measure=o.measure, time_frame=o.time_frame, description=o.description)
            for o in protocol.outcomes_module.primary_outcomes
            if o.measure
        ],
        keywords=protocol.conditions_module.keywords,
        mesh_terms=[m.term for m in study.derived_section.condition_browse_module.meshes if m.term],
        has_results=study.has_results,
        links=[Link(url=STUDY_PAGE.format(nct_id=nct_id), kind="landing")],
        provenance=[Provenance(source=NAME, source_id=nct_id)],
    )


def _date(struct: _DateStruct | None) -> dt.date | None:
    """``2019-06-14``; a partial ``2019-06`` is the first of the month, ``2019`` the
    first of the year."""
    if struct is None or not struct.date:
        return None
    match = _PARTIAL_DATE.match(struct.date.strip())
    if match is None:
        return None
    year, month, day = (int(part) if part else 1 for part in match.groups())
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
