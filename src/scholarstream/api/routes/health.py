"""GET /health: is the process up, can it reach its database, is the engine running."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from scholarstream import __version__
from scholarstream.api._deps import RuntimeDep
from scholarstream.durable import engine_running
from scholarstream.errors import DatabaseUnavailableError

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    database: Literal["sqlite", "postgresql"]
    engine: Literal["running", "not running"]
    mode: Literal["single-user", "multi-user"]
    offline: bool


@router.get("/health", response_model=Health)
async def health(runtime: RuntimeDep) -> Health:
    try:
        await runtime.database.ping()
    except Exception as exc:  # any driver error means the same to a probe
        raise DatabaseUnavailableError("The database does not answer.") from exc
    return Health(
        status="ok",
        version=__version__,
        database="postgresql" if runtime.settings.is_postgres else "sqlite",
        engine="running" if engine_running() else "not running",
        mode="multi-user" if runtime.settings.server.multi_user else "single-user",
        offline=runtime.models.offline,
    )
