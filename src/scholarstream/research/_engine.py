"""What the research workflows share: the process's ``Runtime``, reached through the
engine (workflow functions are module-level, so they cannot be handed it), and the options
of the steps that write to the database."""

from __future__ import annotations

from dbos import StepOptions

from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.runtime import Runtime

__all__ = ["RECORD_STEP", "error_text", "runtime"]


def runtime() -> Runtime:
    """The engine's runtime; ``EngineError`` when no engine runs in this process. Imported
    when called: the engine imports the workflows."""
    from scholarstream.engine import current_runtime

    return current_runtime()


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
