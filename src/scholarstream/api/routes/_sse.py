"""The OpenAPI description of a server-sent events response.

Open API 3.1 has a ``text/event-stream`` schema describe one event: an object with the
event's ``id``, its ``event`` name (``message`` when none is sent) and its ``data``, here
always the JSON of one of the route's event models (``contentSchema``). The models'
schemas are written with component references and carried in ``$defs``; the app moves
them into ``components/schemas`` when it builds the document (``app.ScholarStreamAPI``).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

EVENT_STREAM = "text/event-stream"
COMPONENT_REF = "#/components/schemas/{model}"


def event_stream_response(description: str, events: Any) -> dict[str, Any]:
    """The 200 response of a route streaming ``events`` (a model, or a union of them)."""
    payload = TypeAdapter(events).json_schema(mode="serialization", ref_template=COMPONENT_REF)
    event = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "event": {"type": "string"},
            "retry": {"type": "integer"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": payload,
            },
        },
        "required": ["data"],
    }
    return {"description": description, "content": {EVENT_STREAM: {"schema": event}}}
