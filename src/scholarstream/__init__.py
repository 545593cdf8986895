"""ScholarStream: a self-hostable AI research assistant for scientific literature."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("scholarstream")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

__all__ = ["__version__"]
