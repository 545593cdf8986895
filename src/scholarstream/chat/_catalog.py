"""The product's own payload types, tools and page configs, registered on import."""

from __future__ import annotations

from scholarstream.chat import (
    _builtin_payloads,  # noqa: F401  (registers the payload types)
    pages,  # noqa: F401  (registers the pages)
)
from scholarstream.chat.tools import builtin  # noqa: F401  (registers the tools)

PAGES = ("home", "search", "library", "trials", "settings")
