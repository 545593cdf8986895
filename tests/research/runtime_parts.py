"""The research shell's objects built on the parts of a test's ``Runtime`` they use (as the
interfaces build them).

``research_service`` is the product's own (re-exported here for the tests that import it
from this module)."""

from __future__ import annotations

from scholarstream.research import WebhookCursors, research_service
from scholarstream.runtime import Runtime
from scholarstream.settings import ResearchSettings


def webhooks_of(runtime: Runtime) -> tuple[WebhookCursors, ResearchSettings]:
    """What webhook delivery uses: the cursors on the runtime's database, the ``research``
    settings."""
    return WebhookCursors(runtime.database), runtime.settings.research


__all__ = ["research_service", "webhooks_of"]
