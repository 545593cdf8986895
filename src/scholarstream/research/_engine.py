"""What the research workflows share: the options of the steps that write to the database,
and the text of a step's error. (They reach the process's ``Runtime`` through
``scholarstream.durable.current_runtime()``.)"""

from __future__ import annotations

from dbos import StepOptions

from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError

__all__ = ["RECORD_STEP", "error_text"]


# Answers, not accidents: retrying the step would get the same answer.
_FINAL_ERRORS = (ConflictError, NotFoundError, InvalidInputError)


def _transient(exc: BaseException) -> bool:
    return not isinstance(exc, _FINAL_ERRORS)


# Database writes: retried when the database hiccups.
RECORD_STEP: StepOptions = {
    "retries_allowed": True,
    "max_attempts": 5,
    "interval_seconds": 0.5,
    "backoff_rate": 2.0,
    "should_retry": _transient,
}

_MAX_ERROR = 500


def error_text(exc: BaseException) -> str:
    """What went wrong, for a record: the last error of a step that used up its retries
    (DBOS wraps them), else ``exc`` itself; at most 500 characters."""
    errors = getattr(exc, "errors", None)
    cause = errors[-1] if isinstance(errors, list) and errors else exc
    text = f"{type(cause).__name__}: {cause}"
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"
