"""The features' names that the command line needs when its commands are defined (option
choices, defaults, help text), written out here so that ``scholarstream --help`` imports
no feature (issue 21: the CLI imports only what the command runs).

Each one equals the feature's own value; tests/cli/test_startup_imports.py pins them, so
a format, status or username added to a feature fails that test until it is added here.
"""

from __future__ import annotations

from enum import StrEnum

# scholarstream.accounts.LOCAL_USERNAME: the single-user mode user.
LOCAL_USERNAME = "local"

# scholarstream.papers.formats.import_format_names() and export_format_names().
IMPORT_FORMATS = ("bibtex", "csv", "endnote-xml", "json", "medline", "pubmed-xml", "ris")
EXPORT_FORMATS = ("bibtex", "csv", "json", "ris")


class ResearchStatusChoice(StrEnum):
    """scholarstream.research.ResearchStatus, as a choice of ``research list --status``."""

    DRAFT = "draft"
    PROCESSING = "processing"
    SYNTHESIZING = "synthesizing"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    RETRYING = "retrying"
    COMPLETED = "completed"
    FAILED = "failed"


__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "LOCAL_USERNAME", "ResearchStatusChoice"]


class OnPartialFailure(StrEnum):
    """What ``research run`` does when some models failed and others answered."""

    ASK = "ask"
    PROCEED = "proceed"
    RETRY = "retry"
    CANCEL = "cancel"
