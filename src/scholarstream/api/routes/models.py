"""Model roles and providers as this user sees them (offline mode included)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from scholarstream.api._deps import RuntimeDep, ScopeDep
from scholarstream.llm import RoleStatus, registered_providers

router = APIRouter(prefix="/models", tags=["models"])


class ProviderOut(BaseModel):
    name: str
    label: str
    needs_api_key: bool
    has_credentials: bool


class ModelsOut(BaseModel):
    offline: bool
    roles: list[RoleStatus]
    providers: list[ProviderOut]


@router.get("", response_model=ModelsOut)
async def list_models(scope: ScopeDep, runtime: RuntimeDep) -> ModelsOut:
    providers = [
        ProviderOut(
            name=p.name,
            label=p.label,
            needs_api_key=p.needs_api_key,
            has_credentials=await runtime.credentials.has_credential(scope, p.name),
        )
        for p in registered_providers()
    ]
    return ModelsOut(
        offline=runtime.models.offline,
        roles=await runtime.models.status(scope),
        providers=providers,
    )
