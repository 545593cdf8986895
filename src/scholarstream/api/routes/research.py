"""Multi-LLM research (seed 001): draft a research, edit the draft, start it, answer a
partial failure (proceed, retry, cancel), retry a failed one, read it, and follow its
progress as server-sent events from the outbox.

=================================  ==========================================================
route                              seed
=================================  ==========================================================
``POST /research/draft``           ``POST /research/draft`` (201, status ``draft``)
``PATCH /research/{id}``           editing the draft form
``POST /research``                 ``POST /research`` (start): ``{"researchId": ...}``
``POST /research/{id}/confirm``    ``POST /research/:id/confirm`` (proceed/retry/cancel)
``POST /research/{id}/retry``      ``POST /research/:id/retry`` (Phase 6)
``GET /research``, ``/{id}``       the list (``?status=``), one research
``GET /research/{id}/events``      the ``research-events`` of one research, as SSE
``GET /research/models``           the draft form's choices
=================================  ==========================================================

Bodies and records use the seed's camelCase (snake_case is accepted on input). Another
user's research is a 404, as an unknown id is.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from pydantic import Field

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.api.routes._sse import event_stream_response
from scholarstream.research import (
    MAX_SEQ,
    CamelModel,
    ConfirmRequest,
    DraftDefaults,
    DraftEdit,
    DraftRequest,
    OutboxReader,
    Research,
    ResearchEvent,
    ResearchStatus,
    ResearchStore,
    draft_defaults,
    research_service,
    shared_at,
)
from scholarstream.research.core import check_selected_llms
from scholarstream.sse import EventStreamResponse

router = APIRouter(prefix="/research", tags=["research"])

_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: event_stream_response(
        "Server-sent events, one per lifecycle event of the research in the "
        "order they happened: research.started, research.llm_completed, research.llm_failed, "
        "research.awaiting_confirmation, research.retrying, research.synthesizing, "
        "research.completed, research.failed, research.shared. Each has 'id: <seq>' (its "
        "number in the research's outbox), 'event: <type>' and the event as JSON data "
        "(camelCase, with 'type'). The stream replays the events after Last-Event-ID (or "
        "?after=), then follows new ones, and ends once the research is completed or "
        "failed; a comment keeps an idle connection open.",
        ResearchEvent,
    ),
    204: {"description": "The research is completed or failed and no event follows 'after'."},
}


class StartRequest(CamelModel):
    """The body of ``POST /research``: the draft to start."""

    research_id: uuid.UUID


class ResearchList(CamelModel):
    research: list[Research] = Field(description="Newest first.")


def _as_seen(request: Request, runtime: RuntimeDep, research: Research) -> Research:
    """``research`` with its share link on the address to send people: ``server.public_url``
    when set, else the address this request reached the server at (its scheme, host and
    port, behind a proxy as the proxy's headers say), never a port the server guessed."""
    public = runtime.settings.server.public_url
    return shared_at(research, public or str(request.base_url))


# --- the draft form ----------------------------------------------------------------------


# Declared before GET /{research_id}, which would otherwise take "models" for an id.
@router.get("/models", response_model=DraftDefaults)
async def research_models(user: ReleasedUser, runtime: RuntimeDep) -> DraftDefaults:
    """The models a draft may select: the configured models (of the model roles) you have a
    key for, which a draft selects when it names none; the default synthesis model; and the
    model that writes a title when none is given."""
    service = research_service(runtime)
    available = await service.available_models(user.id)
    return draft_defaults(
        available,
        synthesis_model=await service.synthesis_model(user.id),
        title_model=await service.title_model(user.id),
    )


@router.post("/draft", response_model=Research, status_code=201)
async def create_draft(body: DraftRequest, user: ReleasedUser, runtime: RuntimeDep) -> Research:
    """A new research in ``draft``. Left out: ``title`` is cut from the prompt,
    ``selectedLlms`` are the models of ``GET /research/models``, ``synthesisLlm`` the
    ``synthesis`` role's model (else a Google model, else the first selected). 422 when
    ``selectedLlms`` names more models than ``research.max_selected_llms``."""
    check_selected_llms(body.selected_llms, limit=runtime.settings.research.max_selected_llms)
    return await research_service(runtime).draft(user.id, body)


@router.patch("/{research_id}", response_model=Research)
async def edit_draft(
    research_id: uuid.UUID, body: DraftEdit, user: ReleasedUser, runtime: RuntimeDep
) -> Research:
    """Changes the fields sent; 409 once the research has been started, 422 when
    ``selectedLlms`` names more models than ``research.max_selected_llms``."""
    check_selected_llms(body.selected_llms, limit=runtime.settings.research.max_selected_llms)
    return await research_service(runtime).edit(user.id, research_id, body)


# --- the lifecycle -----------------------------------------------------------------------


@router.post("", response_model=Research)
async def start_research(
    body: StartRequest, user: ReleasedUser, runtime: RuntimeDep, request: Request
) -> Research:
    """Starts a draft: ``processing``, one call per selected model. 400
    ``missing_credentials`` naming every model without an API key (nothing changes), 422
    without models, 409 unless a draft, 503 when the durable engine is not running."""
    return _as_seen(
        request, runtime, await research_service(runtime).start(user.id, body.research_id)
    )


@router.post("/{research_id}/confirm", response_model=Research)
async def confirm_research(
    research_id: uuid.UUID,
    body: ConfirmRequest,
    user: ReleasedUser,
    runtime: RuntimeDep,
    request: Request,
) -> Research:
    """The answer to a partial failure: ``proceed`` synthesises what succeeded, ``retry``
    calls the failed models again (at most twice; then ``failed``, "Max retries
    exceeded"), ``cancel`` fails the research ("Cancelled by user"). 409 unless
    ``awaiting_confirmation``."""
    confirmed = await research_service(runtime).confirm(user.id, research_id, body.action)
    return _as_seen(request, runtime, confirmed)


@router.post("/{research_id}/retry", response_model=Research)
async def retry_research(
    research_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep, request: Request
) -> Research:
    """Retries a failed research: its failed models (``retrying``), else its synthesis
    (``synthesizing``), else nothing is left to retry (``completed``); and the synthesis of a
    completed research whose synthesis failed ("Synthesis not available"). 409 otherwise."""
    return _as_seen(request, runtime, await research_service(runtime).retry(user.id, research_id))


# --- reading -----------------------------------------------------------------------------


@router.get("", response_model=ResearchList)
async def list_research(
    user: ReleasedUser,
    runtime: RuntimeDep,
    request: Request,
    status: Annotated[
        list[ResearchStatus] | None,
        Query(description="Only research in these statuses (repeat for several)."),
    ] = None,
) -> ResearchList:
    found = await research_service(runtime).list(user.id, statuses=status)
    return ResearchList(research=[_as_seen(request, runtime, research) for research in found])


@router.get("/{research_id}", response_model=Research)
async def get_research(
    research_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep, request: Request
) -> Research:
    """The research; its share link (once completed and shared) is on ``server.public_url``,
    else on the address this request reached the server at."""
    return _as_seen(request, runtime, await research_service(runtime).get(user.id, research_id))


@router.get("/{research_id}/events", response_class=EventStreamResponse, responses=_SSE_DOC)
async def research_events(
    research_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    after: Annotated[
        int,
        Query(ge=0, le=MAX_SEQ, description="Send the events after this seq (0: all of them)."),
    ] = 0,
    last_event_id: Annotated[
        int | None,
        Header(
            ge=0, le=MAX_SEQ, description="The seq of the last event received; wins over after."
        ),
    ] = None,
) -> Response:
    """The research's lifecycle events as server-sent events (see the 200 response)."""
    start_after = last_event_id if last_event_id is not None else after
    reader = OutboxReader(ResearchStore(runtime.database))
    # 404 before any byte is streamed.
    events = await reader.open(user.id, research_id, after=start_after)
    if events is None:
        # Tells an EventSource that reconnects after the end to stop reconnecting.
        return Response(status_code=204)
    return EventStreamResponse(events, named=True)
