"""The current user: who they are, their own provider keys, their model usage."""

from __future__ import annotations

import uuid
from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel, Field

from scholarstream.api._deps import CurrentUser, RuntimeDep, ScopeDep
from scholarstream.db.tables import User
from scholarstream.llm import UsageTotal, usage_totals
from scholarstream.runtime import Runtime

router = APIRouter(prefix="/me", tags=["me"])


class UserOut(BaseModel):
    id: uuid.UUID
    username: str
    display_name: str
    is_admin: bool
    mode: str

    @classmethod
    def from_user(cls, user: User, runtime: Runtime) -> UserOut:
        mode = "multi-user" if runtime.settings.server.multi_user else "single-user"
        return cls(
            id=user.id,
            username=user.username,
            display_name=user.display_name,
            is_admin=user.is_admin,
            mode=mode,
        )


class ProviderKeyIn(BaseModel):
    api_key: str = Field(
        min_length=1, max_length=1000, description="Stored encrypted; never returned."
    )


class ProviderKeyOut(BaseModel):
    provider: str
    created_at: datetime


@router.get("", response_model=UserOut)
async def me(user: CurrentUser, runtime: RuntimeDep) -> UserOut:
    return UserOut.from_user(user, runtime)


@router.get("/provider-keys", response_model=list[ProviderKeyOut])
async def list_provider_keys(scope: ScopeDep, runtime: RuntimeDep) -> list[ProviderKeyOut]:
    keys = await runtime.credentials.list_user_keys(scope)
    return [ProviderKeyOut(provider=k.provider, created_at=k.created_at) for k in keys]


@router.put("/provider-keys/{provider}", status_code=204)
async def put_provider_key(
    provider: str, body: ProviderKeyIn, scope: ScopeDep, runtime: RuntimeDep
) -> None:
    await runtime.credentials.store_user_key(scope, provider, body.api_key)


@router.delete("/provider-keys/{provider}", status_code=204)
async def delete_provider_key(provider: str, scope: ScopeDep, runtime: RuntimeDep) -> None:
    await runtime.credentials.delete_user_key(scope, provider)


@router.get("/usage", response_model=list[UsageTotal])
async def usage(scope: ScopeDep) -> list[UsageTotal]:
    return await usage_totals(scope)
