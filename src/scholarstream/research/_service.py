"""What the API routes and the CLI call to run multi-LLM research (seed 001).

Each action applies a function of the core to the stored research in one locked
transaction (``ResearchStore.apply``), follows it with the transitions nobody has to ask
for (``advance``), then hands the engine the calls and the synthesis the change asks for
(``execution.dispatch``). Every method is scoped to its owner: another user's research is
``NotFoundError`` (404), as is an unknown id.

The service receives what it uses: the database, the model registry and the credential
store (the models a user may select), the gateway and the ``research`` settings (a
draft's title); the interfaces unpack the ``Runtime`` into these.

======================================  ===================================================
method                                  seed
======================================  ===================================================
``draft(owner, DraftRequest)``          ``POST /research/draft``
``edit(owner, id, DraftEdit)``          editing the draft form
``start(owner, id)``                    ``POST /research`` (start)
``confirm(owner, id, action)``          ``POST /research/:id/confirm`` (proceed/retry/cancel)
``retry(owner, id)``                    ``POST /research/:id/retry``
``get``, ``list``, ``events``           reading a research, the list, its lifecycle events
======================================  ===================================================
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from scholarstream.db import Database, OwnerScope
from scholarstream.errors import UnknownProviderError
from scholarstream.llm import CredentialStore, LLMGateway, ModelRegistry
from scholarstream.research._execution import dispatch, dispatch_for, require_engine
from scholarstream.research._model_calls import SYNTHESIS_ROLE
from scholarstream.research._store import ResearchStore, StoredEvent
from scholarstream.research._titles import DraftTitle, draft_title
from scholarstream.research.core import (
    ConfirmAction,
    DraftEdit,
    DraftRequest,
    Research,
    ResearchChange,
    ResearchStatus,
    advance,
    confirm,
    create_draft,
    edit_draft,
    models_needing_credentials,
    retry_research,
    start_research,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import ResearchSettings

__all__ = ["ResearchService"]


class ResearchService:
    def __init__(
        self,
        database: Database,
        *,
        models: ModelRegistry,
        credentials: CredentialStore,
        llm: LLMGateway,
        settings: ResearchSettings,
    ) -> None:
        self.database = database
        self.models = models
        self.credentials = credentials
        self.llm = llm
        self.settings = settings
        self.store = ResearchStore(database)

    async def available_models(self, owner_id: uuid.UUID) -> list[str]:
        """The models of this user's roles (their choices, the server defaults, the
        settings) and of their checked endpoints that they have a key for: a draft's
        default selection."""
        async with self.database.session() as session:
            configured = await self.models.user_models(OwnerScope(session, owner_id))
        usable = await self._models_with_credentials(
            owner_id, list(configured), unknown_providers_allowed=True
        )
        return [model for model in configured if model in usable]

    async def draft(self, owner_id: uuid.UUID, request: DraftRequest) -> Research:
        """A new draft. Without a title, the title model writes one from the prompt (in at
        most ``research.title_timeout_seconds``), else it is cut from the prompt (recorded
        in ``fallbacks`` when the model was asked and gave none)."""
        needs_defaults = request.selected_llms is None or request.synthesis_llm is None
        available = await self.available_models(owner_id) if needs_defaults else []
        untitled = not (request.title or "").strip()
        titled = (
            await draft_title(
                owner_id,
                request.prompt,
                settings=self.settings,
                database=self.database,
                models=self.models,
                llm=self.llm,
            )
            if untitled
            else DraftTitle()
        )
        research = create_draft(
            request,
            available_models=available,
            synthesis_model=await self.synthesis_model(owner_id),
            generated_title=titled.title,
            title_fallback=titled.fallback,
        )
        return await self.store.create(owner_id, research)

    async def title_model(self, owner_id: uuid.UUID) -> str | None:
        """The model that writes this user's draft titles (``research.title_role``), or
        None when titles are cut from the prompt (no role, or no model for this user)."""
        role = self.settings.title_role
        if role is None or await self.models.offline_for_owner(self.database, owner_id):
            return None
        async with self.database.session() as session:
            choice = await self.models.choice(role, OwnerScope(session, owner_id))
        return None if choice is None else choice.model

    async def synthesis_model(self, owner_id: uuid.UUID) -> str | None:
        """The model of this user's ``synthesis`` role (else their default's)."""
        async with self.database.session() as session:
            choice = await self.models.choice(SYNTHESIS_ROLE, OwnerScope(session, owner_id))
        return None if choice is None else choice.model

    async def edit(self, owner_id: uuid.UUID, research_id: uuid.UUID, edit: DraftEdit) -> Research:
        applied = await self.store.apply(
            owner_id, research_id, lambda r: ResearchChange(research=edit_draft(r, edit))
        )
        return applied.research

    async def start(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        """``processing``, one call per selected model enqueued. ``InvalidInputError`` for
        a draft without models, ``MissingCredentialsError`` naming every model without a
        key, ``ConflictError`` unless a draft, ``EngineError`` without a running engine."""
        require_engine()
        draft = await self.store.get(owner_id, research_id)
        usable = await self._models_with_credentials(owner_id, models_needing_credentials(draft))
        return await self._act(
            owner_id,
            research_id,
            # A model added since ``draft`` was read counts as without a key: start again.
            lambda r: start_research(r, has_credentials=usable.__contains__),
        )

    async def confirm(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, action: ConfirmAction
    ) -> Research:
        """The answer to a partial failure: ``proceed`` synthesises what succeeded, ``retry``
        calls the failed models again, ``cancel`` fails the research."""
        require_engine()
        return await self._act(owner_id, research_id, lambda r: confirm(r, action))

    async def retry(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        """Retry a failed research (its failed models, else its synthesis), or the
        synthesis of a completed research whose synthesis failed; ``ConflictError`` (409)
        for any other research."""
        require_engine()
        return await self._act(owner_id, research_id, retry_research)

    async def get(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        return await self.store.get(owner_id, research_id)

    async def events(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, *, after_seq: int = 0
    ) -> list[StoredEvent]:
        return await self.store.events(owner_id, research_id, after_seq=after_seq)

    async def _act(
        self,
        owner_id: uuid.UUID,
        research_id: uuid.UUID,
        action: Callable[[Research], ResearchChange],
    ) -> Research:
        applied = await self.store.apply(owner_id, research_id, lambda r: advance(action(r)))
        await dispatch(dispatch_for(applied))
        return applied.research

    async def _models_with_credentials(
        self, owner_id: uuid.UUID, models: Sequence[str], *, unknown_providers_allowed: bool = False
    ) -> set[str]:
        """The ``models`` this user has a key for. A model of a provider nobody configured
        is ``UnknownProviderError``, or left out when ``unknown_providers_allowed`` (a
        misconfigured role must not stop drafts; 'scholarstream models' shows it)."""
        usable: set[str] = set()
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            for model in models:
                try:
                    if await self.models.can_call(scope, model):
                        usable.add(model)
                except UnknownProviderError:
                    if not unknown_providers_allowed:
                        raise
        return usable

    async def list(
        self, owner_id: uuid.UUID, *, statuses: Sequence[ResearchStatus] | None = None
    ) -> list[Research]:
        return await self.store.list(owner_id, statuses=statuses)


def research_service(runtime: Runtime) -> ResearchService:
    """The service on the parts of ``runtime`` it uses: what the interfaces (routes, pages,
    commands) call, so that the runtime is unpacked in one place."""
    return ResearchService(
        runtime.database,
        models=runtime.models,
        credentials=runtime.credentials,
        llm=runtime.llm,
        settings=runtime.settings.research,
    )
