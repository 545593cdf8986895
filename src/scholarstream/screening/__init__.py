"""Screening projects for systematic and scoping reviews (issue 25).

A project takes its records from a search run, a stream report or the library, with
inclusion and exclusion criteria and the review's keywords written once. Reviewers
screen titles and abstracts one record at a time (``ScreeningService.next``, ``decide``,
``undo``), the next record chosen by the active-learning ranker refitted on their
decisions; an exclusion takes a reason from the criteria. Two or more reviewers screen
blind (multi-user mode), and the owner settles their conflicts. The owner records the
full-text stage, and the PRISMA 2020 flow is counted from it all (``prisma``), drawn as
SVG (``core.render_svg``) and PNG (``render_png``), and exported with the records'
decisions as RIS, BibTeX or CSV. A model (the ``fast`` role) suggests include, exclude or
unsure with a checked quote (``Suggester``); without one the ranker's score stands in.

``screening_service(runtime)`` builds the service; ``suggester_for(runtime, user)`` the
user's suggester (None in offline mode)."""

from scholarstream.screening._origins import (
    MAX_RECORDS,
    FromLibrary,
    FromSearchRun,
    FromStreamReport,
    Gathered,
    RecordSource,
)
from scholarstream.screening._png import render_png
from scholarstream.screening._runtime import screening_service, suggester_for
from scholarstream.screening._service import ScreeningService
from scholarstream.screening._store import ScreeningStore
from scholarstream.screening._suggest import FEATURE, NO_MODEL, Suggester, fallback_note
from scholarstream.screening.core import (
    MAX_RECORDS_PAGE,
    RECORDS_PAGE,
    ConflictList,
    DecisionIn,
    DownloadName,
    FullTextIn,
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
    ResolutionIn,
    ScreeningStep,
    Suggestion,
    counted,
    download_name,
    prisma_csv,
    prisma_diagram,
    render_svg,
)

__all__ = [
    "FEATURE",
    "MAX_RECORDS",
    "MAX_RECORDS_PAGE",
    "NO_MODEL",
    "RECORDS_PAGE",
    "ConflictList",
    "DecisionIn",
    "DownloadName",
    "FromLibrary",
    "FromSearchRun",
    "FromStreamReport",
    "FullTextIn",
    "FullTextList",
    "Gathered",
    "PrismaCounts",
    "PrismaEntries",
    "Progress",
    "Project",
    "ProjectList",
    "ProjectSettings",
    "ProjectUpdate",
    "RecordFilter",
    "RecordList",
    "RecordSource",
    "ResolutionIn",
    "ScreeningService",
    "ScreeningStep",
    "ScreeningStore",
    "Suggester",
    "Suggestion",
    "counted",
    "download_name",
    "fallback_note",
    "prisma_csv",
    "prisma_diagram",
    "render_png",
    "render_svg",
    "screening_service",
    "suggester_for",
]
