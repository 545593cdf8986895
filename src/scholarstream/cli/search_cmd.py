"""``scholarstream search``: a paper search with checkpoints in the terminal."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
