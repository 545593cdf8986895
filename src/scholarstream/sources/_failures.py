"""What a source's failure tells a person: one rule, by cause, for every live source.

The HTTP layer (``_http``) knows *why* a request failed: no connection at all, a secure
connection that failed, no answer in time, an answer broken off, a rate limit, an error
on the source's side. Each cause has one sentence naming the source by its label and one
hint saying what to do, written here once, so PubMed, OpenAlex, ClinicalTrials.gov and the
rest read the same, on the Trials page, in a stream's report, in the chat and in the
terminal. No exception class, library name or retry bookkeeping reaches the text (the log
keeps those).

A failure carries its ``cause`` (``SourceFailedError.cause``; ``SourceStatus.cause`` in a
multi-source search), so a client that words failures its own way (the chat's summaries)
words them by cause too.

=================  =====================================================================
cause              says
=================  =====================================================================
``unreachable``    Could not reach PubMed (no network connection from this server?).
``insecure``       Could not make a secure connection to PubMed.
``timeout``        PubMed did not answer in time.
``dropped``        PubMed broke off its answer before it was complete.
``rate_limited``   PubMed is limiting how often it may be searched (too many requests).
``server_error``   PubMed answered with an error on its side (HTTP 503 Service Unavailable).
=================  =====================================================================
"""

from __future__ import annotations

import math
from enum import StrEnum
from http import HTTPStatus

from scholarstream.errors import SourceUnavailableError

__all__ = [
    "FailureCause",
    "SourceFailedError",
    "SourceUnreachableError",
    "failure_words",
    "source_failure",
]


class FailureCause(StrEnum):
    UNREACHABLE = "unreachable"
    INSECURE = "insecure"
    TIMEOUT = "timeout"
    DROPPED = "dropped"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"


class SourceFailedError(SourceUnavailableError):
    """A source that could not be searched, with why (``cause``): the API's code stays
    ``source_unavailable``; the message and hint are ``source_failure``'s."""

    def __init__(
        self, source: str, message: str, *, cause: FailureCause, hint: str | None = None
    ) -> None:
        super().__init__(source, message, hint=hint)
        self.cause = cause


class SourceUnreachableError(SourceFailedError):
    """The source could not be reached at all (no DNS answer, no route, refused), while no
    other source of the run had answered: the machine is probably offline, so it was not
    retried (``_connectivity``)."""

    default_hint = (
        "Check that this server can reach the internet (its network, DNS or proxy); your "
        "library is searchable offline."
    )

    def __init__(self, source: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(source, message, cause=FailureCause.UNREACHABLE, hint=hint)


_RETRY_SOON = "try again in a few minutes; the other sources and your library still work."

# (what happened, in a sentence with {label}; what to do)
_TEXTS: dict[FailureCause, tuple[str, str]] = {
    FailureCause.UNREACHABLE: (
        "Could not reach {label} (no network connection from this server?).",
        "Check that this server can reach the internet (its network, DNS or proxy), then "
        "try again. Your library works offline.",
    ),
    FailureCause.INSECURE: (
        "Could not make a secure connection to {label}.",
        "A proxy or firewall that intercepts secure connections, or a wrong clock on this "
        "server, causes this: try again once it is fixed.",
    ),
    FailureCause.TIMEOUT: ("{label} did not answer in time.", f"It may be busy: {_RETRY_SOON}"),
    FailureCause.DROPPED: (
        "{label} broke off its answer before it was complete.",
        f"It may be busy: {_RETRY_SOON}",
    ),
    FailureCause.RATE_LIMITED: (
        "{label} is limiting how often it may be searched (too many requests).",
        "Wait a minute or two, then try again.",
    ),
    FailureCause.SERVER_ERROR: (
        "{label} answered with an error on its side{status}.",
        f"The problem is at the source, not here: {_RETRY_SOON}",
    ),
}

# The same, as a clause after the source's label, for a summary that names several
# sources at once ("PubMed and OpenAlex did not answer in time"), with what to do.
_CLAUSES: dict[FailureCause, tuple[str, str]] = {
    FailureCause.UNREACHABLE: (
        "could not be reached (no network connection from this server?)",
        "Try again when the connection is back; your library works offline.",
    ),
    FailureCause.INSECURE: (
        "could not be reached over a secure connection",
        "Try again once this server's proxy or clock is fixed.",
    ),
    FailureCause.TIMEOUT: ("did not answer in time", "Try again in a few minutes."),
    FailureCause.DROPPED: ("broke off its answer", "Try again in a few minutes."),
    FailureCause.RATE_LIMITED: (
        "limited how often it may be searched",
        "Wait a minute or two, then try again.",
    ),
    FailureCause.SERVER_ERROR: (
        "answered with an error on its side",
        "Try again in a few minutes.",
    ),
}


def _status_text(status: int | None) -> str:
    if status is None:
        return ""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        return f" (HTTP {status})"
    return f" (HTTP {status} {phrase})"


def source_failure(
    source: str,
    label: str,
    cause: FailureCause,
    *,
    status: int | None = None,
    wait_seconds: float | None = None,
    offline: bool = False,
) -> SourceFailedError:
    """The error for ``source`` (named ``label``) that failed for ``cause``. ``status``:
    the HTTP status of an error answer; ``wait_seconds``: how long a rate limit asked us to
    wait; ``offline``: the source was not retried, as no source of the run could be reached
    (the machine appears to be offline)."""
    message, hint = _TEXTS[cause]
    message = message.format(label=label, status=_status_text(status))
    if cause is FailureCause.RATE_LIMITED and wait_seconds is not None:
        minutes = max(1, math.ceil(wait_seconds / 60))
        wait = f"{minutes} minute{'s' if minutes != 1 else ''}"
        message = f"{label} is limiting how often it may be searched and asks us to wait {wait}."
        hint = f"Wait {wait}, then try again; the other sources and your library still work."
    if offline:
        return SourceUnreachableError(
            source,
            f"Could not reach {label}: this server appears to have no network connection.",
        )
    return SourceFailedError(source, message, cause=cause, hint=hint)


def failure_words(cause: FailureCause | str | None) -> tuple[str, str] | None:
    """``(what happened, what to do)`` of ``cause`` as a clause after a source's label, or
    None for a failure with no known cause."""
    try:
        return _CLAUSES[FailureCause(cause)] if cause is not None else None
    except ValueError:
        return None
