"""The ``scholarstream`` command line (Typer)."""

from scholarstream.cli.app import app, main

__all__ = ["app", "main"]
