"""What the chat's tools work with, unpacked from a test's runtime (as the API does)."""

from __future__ import annotations

from scholarstream.chat import ToolServices
from scholarstream.runtime import Runtime


def tool_services(runtime: Runtime) -> ToolServices:
    return ToolServices(
        database=runtime.database,
        sources=runtime.sources,
        library=runtime.library,
        search=runtime.settings.search,
        chat=runtime.settings.chat,
    )
