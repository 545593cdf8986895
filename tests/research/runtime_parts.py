"""The research shell's objects built on the parts of a test's ``Runtime`` they use (as the
interfaces build them)."""

from __future__ import annotations

from scholarstream.research import ResearchService, WebhookCursors
from scholarstream.runtime import Runtime
from scholarstream.settings import ResearchSettings


def research_service(runtime: Runtime) -> ResearchService:
    return ResearchService(
        runtime.database,
        models=runtime.models,
        credentials=runtime.credentials,
        llm=runtime.llm,
        settings=runtime.settings.research,
    )


def webhooks_of(runtime: Runtime) -> tuple[WebhookCursors, ResearchSettings]:
    """What webhook delivery uses: the cursors on the runtime's database, the ``research``
    settings."""
    return WebhookCursors(runtime.database), runtime.settings.research
