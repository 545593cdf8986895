"""Reading a source's JSON answer into typed models."""

from __future__ import annotations

from typing import TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from scholarstream.errors import SourceUnavailableError


class ResponseModel(BaseModel):
    """A piece of a source's answer. APIs add fields over time; only those read are declared."""

    model_config = ConfigDict(extra="ignore")


M = TypeVar("M", bound=BaseModel)


def read_json(source: str, label: str, model: type[M], response: httpx.Response) -> M:
    """The body as ``model``; a body in another shape means the source is not answering as
    documented, which is reported as the source being unavailable."""
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        raise SourceUnavailableError(
            source,
            f"{label} answered with a body we could not read ({exc.error_count()} problems, "
            f"first: {exc.errors()[0]['msg']}).",
            hint=f"Try again later; if it persists the {label} API may have changed.",
        ) from exc
