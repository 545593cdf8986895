"""Files the commands write: checked before the work starts, written beside the target and
renamed at the end, so a failed write never leaves a half-written file where a good one
was and never ends in a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from scholarstream.errors import InvalidInputError


def check_writable(target: Path, option: str) -> None:
    """``InvalidInputError`` now, before any work, when ``target`` cannot be written."""
    if target.is_dir():
        raise InvalidInputError(f"{target} is a folder.", hint=f"Give a file name to {option}.")
    if not target.parent.is_dir():
        raise InvalidInputError(
            f"The folder {target.parent} does not exist.",
            hint=f"Create it, or give {option} a file in a folder that exists.",
        )


@contextmanager
def written_file(target: Path) -> Iterator[TextIO]:
    """A handle to write ``target`` through; the file appears only once all is written."""
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InvalidInputError(
            f"Could not write {target}: {exc.strerror or 'the system refused'}.",
            hint="Check that the folder exists and that you may write there, and that the "
            "disk is not full.",
        ) from exc
