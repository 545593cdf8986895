"""``scholarstream dedup``: find duplicate records across bibliographic files."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
