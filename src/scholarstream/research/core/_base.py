"""What every research model shares: snake_case in Python, the seed's camelCase on the wire.

Fields are written ``selected_llms`` in Python and read or emitted as ``selectedLlms``
(either spelling is accepted on input; JSON and ``model_dump`` emit the camelCase alias),
so the API, the events and the stored JSON all use the seed's names. Models are frozen:
every operation returns a new record instead of changing the one it was given."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        frozen=True,
    )


def utc_now(now: datetime | None = None) -> datetime:
    """``now`` when the caller fixed the time (tests, durable steps), else the current UTC time."""
    return now if now is not None else datetime.now(UTC)
