"""The one place that uses a private part of DBOS: ``DBOS._recover_pending_workflows``.

DBOS recovers the interrupted workflows of its own executor at launch, and offers the
recovery of other executors only to its (commercial) conductor. The engine recovers the
workflows of processes that are gone (``Engine.recover_abandoned``) with this private
method, so it is guarded: the installed DBOS must be the major version the product is
tested with (pyproject.toml bounds it too) and have the method with the signature the
tests pin (tests/durable/test_dbos_private.py, tests/engine/)."""

from __future__ import annotations

import inspect
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from dbos import DBOS

from scholarstream.errors import EngineError

__all__ = ["TESTED_DBOS_MAJOR", "check_dbos_version", "recover_pending_workflows"]

TESTED_DBOS_MAJOR = 3
_METHOD = "_recover_pending_workflows"


def _installed_version() -> str:
    try:
        return version("dbos")
    except PackageNotFoundError:  # pragma: no cover - dbos is a requirement
        return "unknown"


def check_dbos_version(installed: str | None = None, *, dbos: Any = DBOS) -> None:
    """``EngineError`` unless ``installed`` (default: the installed dbos) is the tested major
    version and ``dbos`` has the private recovery method taking a list of executor ids."""
    found = installed or _installed_version()
    major = found.split(".", 1)[0]
    if major != str(TESTED_DBOS_MAJOR):
        raise EngineError(
            f"dbos {found} is installed; ScholarStream is tested with dbos "
            f"{TESTED_DBOS_MAJOR}.x only.",
            hint=f"Install a supported version: pip install 'dbos>={TESTED_DBOS_MAJOR}.4,"
            f"<{TESTED_DBOS_MAJOR + 1}'.",
        )
    method = getattr(dbos, _METHOD, None)
    if not callable(method) or "executor_ids" not in inspect.signature(method).parameters:
        raise EngineError(
            f"dbos {found} has no {_METHOD}(executor_ids): the engine cannot recover the "
            "workflows of processes that are gone.",
            hint=f"Install a supported version: pip install 'dbos>={TESTED_DBOS_MAJOR}.4,"
            f"<{TESTED_DBOS_MAJOR + 1}'.",
        )


def recover_pending_workflows(executor_ids: list[str]) -> list[Any]:
    """Puts the pending workflows of ``executor_ids`` back on their queues (or restarts
    them); their handles. Blocking: call it in a thread."""
    handles: list[Any] = getattr(DBOS, _METHOD)(executor_ids)
    return handles
