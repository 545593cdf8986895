"""Research streams (seed 000): create one with the AI guide (a creation session whose
turns stream over SSE; the open ones are listed as drafts to come back to), then list,
read, edit and delete the streams."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.api.routes._sse import event_stream_response
from scholarstream.runtime import Runtime
from scholarstream.sources import SourceInfo
from scholarstream.sources.library import LIBRARY_INFO
from scholarstream.sse import EventStreamResponse
from scholarstream.streams import (
    CreationEvent,
    CreationTurnIn,
    StreamLocator,
    StreamSourceList,
    StreamStore,
    check_turn,
    creation_guide,
    refused_turn,
    run_creation_turn,
    stream_sources,
    turn_stream,
    unavailable_sources,
)
from scholarstream.streams.core import (
    CreationList,
    CreationRecord,
    CreationView,
    GuideKind,
    Stream,
    StreamList,
    StreamUpdate,
)

router = APIRouter(prefix="/streams", tags=["streams"])

_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: event_stream_response(
        "Server-sent events: text_delta (and retry: clear the text so far), "
        "then turn_result (the session saved; stream_id and stream_url once the stream is "
        "created) or error (nothing saved: code, message, hint, and field when the error "
        "is about one). A turn refused before the guide is asked (code invalid_input: an "
        "unknown field, a value outside an enum, a required field skipped, an empty "
        "message; conflict: the creation is over) is one error event. Each event's id is "
        "'<revision>:<n>'.",
        CreationEvent,
    )
}


def _locator(request: Request) -> StreamLocator:
    def locate(stream_id: uuid.UUID) -> str:
        return str(request.app.url_path_for("get_stream", stream_id=str(stream_id)))

    return locate


async def _guide_kind(runtime: Runtime, owner_id: uuid.UUID) -> GuideKind:
    offline = await runtime.models.offline_for_owner(runtime.database, owner_id)
    return "rules" if offline else "model"


async def _view(
    record: CreationRecord, runtime: Runtime, request: Request, owner_id: uuid.UUID
) -> CreationView:
    url = _locator(request)(record.stream_id) if record.stream_id else None
    guide = await _guide_kind(runtime, owner_id)
    return CreationView.of(record, guide=guide, stream_url=url)


# --- creation -----------------------------------------------------------------------------


def _source_infos(runtime: Runtime) -> list[SourceInfo]:
    return [LIBRARY_INFO, *runtime.sources.infos()]


@router.post(
    "/creation",
    response_model=CreationView,
    status_code=201,
    responses={200: {"model": CreationView, "description": "Your empty draft, opened again."}},
)
async def start_creation(
    user: ReleasedUser, runtime: RuntimeDep, request: Request, response: Response
) -> CreationView:
    """A creation at ``exploration``, with the guide's opening question: a new one (201),
    or the user's empty draft, one no turn was taken in yet (200), so a page opened twice
    leaves one draft. ``guide`` says who answers: the configured model, or the rule-based
    guide in offline mode."""
    record, new = await StreamStore(runtime.database).open_creation(user.id)
    if not new:
        response.status_code = 200
    return await _view(record, runtime, request, user.id)


CreationFilter = Literal["open", "completed", "abandoned", "all"]


# Declared before GET /{stream_id}, which would otherwise take "creation" for a stream id.
@router.get("/creation", response_model=CreationList)
async def list_creations(
    user: ReleasedUser,
    runtime: RuntimeDep,
    status: Annotated[
        CreationFilter, Query(description="Which creations: open drafts (default), or all.")
    ] = "open",
) -> CreationList:
    """The user's creations, most recently changed first: by default the open drafts,
    each reopened with ``GET /creation/{id}`` (on the web, ``/streams/new/{id}``)."""
    chosen = None if status == "all" else status
    return CreationList(creations=await StreamStore(runtime.database).creations(user.id, chosen))


@router.get("/creation/{creation_id}", response_model=CreationView)
async def get_creation(
    creation_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep, request: Request
) -> CreationView:
    record = await StreamStore(runtime.database).creation(user.id, creation_id)
    return await _view(record, runtime, request, user.id)


@router.post(
    "/creation/{creation_id}/turns", response_class=EventStreamResponse, responses=_SSE_DOC
)
async def creation_turn(
    creation_id: uuid.UUID,
    body: CreationTurnIn,
    user: ReleasedUser,
    runtime: RuntimeDep,
    request: Request,
) -> EventStreamResponse:
    """One turn of the guide, as server-sent events. Input the turn refuses (an unknown
    field, a value outside an enum, a required field skipped, an action the step does not
    take: ``invalid_input``) and a finished or abandoned creation (``conflict``) are
    answered with one ``error`` event naming the ``field``, without asking the guide. A
    body that does not fit the schema (422 ``validation_error``) and an unknown creation
    (404) are plain HTTP errors. The stored session only changes when the turn ends with
    ``turn_result``."""
    store = StreamStore(runtime.database)
    record = await store.creation(user.id, creation_id)
    refused = check_turn(record, body)
    if refused is not None:
        events = refused_turn(refused)
    else:
        guide = await creation_guide(runtime.database, runtime.models, runtime.settings, user.id)
        events = run_creation_turn(
            store,
            user.id,
            record,
            body,
            guide,
            locate=_locator(request),
            unavailable_sources=unavailable_sources(_source_infos(runtime)),
        )
    return EventStreamResponse(turn_stream(record.revision, events))


@router.delete("/creation/{creation_id}", status_code=204)
async def delete_creation(
    creation_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Response:
    """Deletes a draft (open or abandoned) with its conversation; a completed creation is
    its stream's history (409: delete the stream instead)."""
    await StreamStore(runtime.database).delete_creation(user.id, creation_id)
    return Response(status_code=204)


@router.post("/creation/{creation_id}/abandon", response_model=CreationView)
async def abandon_creation(
    creation_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep, request: Request
) -> CreationView:
    """Ends an open creation without creating a stream (409 once completed)."""
    record = await StreamStore(runtime.database).abandon(user.id, creation_id)
    return await _view(record, runtime, request, user.id)


# --- streams ------------------------------------------------------------------------------


@router.get("", response_model=StreamList)
async def list_streams(user: ReleasedUser, runtime: RuntimeDep) -> StreamList:
    return StreamList(streams=await StreamStore(runtime.database).list(user.id))


# Declared before GET /{stream_id}, which would otherwise take "sources" for a stream id.
@router.get("/sources", response_model=StreamSourceList)
async def list_stream_sources(user: ReleasedUser, runtime: RuntimeDep) -> StreamSourceList:
    """The sources a stream can search, each ``available`` on this server or not, with the
    ``reason`` and ``how_to_enable`` it. A new stream searches only the available ones."""
    return stream_sources(_source_infos(runtime))


@router.get("/{stream_id}", response_model=Stream)
async def get_stream(stream_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> Stream:
    return await StreamStore(runtime.database).get(user.id, stream_id)


@router.patch("/{stream_id}", response_model=Stream)
async def update_stream(
    stream_id: uuid.UUID, body: StreamUpdate, user: ReleasedUser, runtime: RuntimeDep
) -> Stream:
    """Edits the fields sent, each checked as the creation workflow checks it; per-source
    changes go in ``retrieval.queries``. A refused edit (422) changes nothing."""
    return await StreamStore(runtime.database).update(user.id, stream_id, body)


@router.delete("/{stream_id}", status_code=204)
async def delete_stream(stream_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> Response:
    await StreamStore(runtime.database).delete(user.id, stream_id)
    return Response(status_code=204)
