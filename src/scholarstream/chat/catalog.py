"""The product's own payload types, tools and page configs, registered on import."""

from __future__ import annotations

from scholarstream.chat import builtin_payloads  # noqa: F401  (registers the payload types)
from scholarstream.chat.pages import (  # noqa: F401  (register the pages)
    home,
    library,
    research,
    search,
    settings,
    stream_report,
    streams,
    trials,
)
from scholarstream.chat.tools import builtin  # noqa: F401  (registers the tools)

PAGES = ("home", "search", "library", "trials", "settings")
