"""ScholarStream: a self-hostable AI research assistant for scientific literature."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["__version__"]

if TYPE_CHECKING:
    __version__: str
else:

    def __getattr__(name: str) -> str:
        # Looked up on first use, not on import: importlib.metadata costs a command line's
        # start-up more than Typer and Rich do (issue 21).
        if name != "__version__":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("scholarstream")
        except PackageNotFoundError:  # running from a source tree without installation
            found = "0.0.0"
        globals()["__version__"] = found
        return found
