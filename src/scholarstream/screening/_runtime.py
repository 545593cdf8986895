"""The screening service and a user's suggester, built from the process's runtime."""

from __future__ import annotations

import uuid

from scholarstream.db import OwnerScope
from scholarstream.errors import ScholarStreamError
from scholarstream.runtime import Runtime
from scholarstream.screening._service import ScreeningService
from scholarstream.screening._suggest import ROLE, Suggester
from scholarstream.search import GatewaySkillLLM, library_embedder
from scholarstream.sources.library import LIBRARY_INFO


def screening_service(runtime: Runtime) -> ScreeningService:
    labels = {info.name: info.label for info in [LIBRARY_INFO, *runtime.sources.infos()]}
    return ScreeningService(
        database=runtime.database,
        library=runtime.library,
        source_labels=labels,
        multi_user=runtime.settings.server.multi_user,
        embedder=library_embedder(runtime.library),
    )


async def suggester_for(runtime: Runtime, user_id: uuid.UUID) -> Suggester | None:
    """The user's ``fast`` model as a suggester; None in offline mode (no model at all)."""
    if await runtime.models.offline_for_owner(runtime.database, user_id):
        return None
    label = "the configured model"
    try:
        async with runtime.database.session() as session:
            resolved = await runtime.models.resolve(ROLE, OwnerScope(session, user_id))
        label = resolved.model_string
    except ScholarStreamError:
        # A model that cannot be reached or has no key fails on the call, and the
        # suggestion says why there; the label only names it.
        pass
    return Suggester(GatewaySkillLLM(runtime.llm, runtime.database, user_id), label)
