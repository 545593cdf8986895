"""API tokens of the current user."""

from __future__ import annotations

import uuid
from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel, Field

from scholarstream.accounts import create_api_token, list_api_tokens, revoke_api_token
from scholarstream.api._deps import ScopeDep

router = APIRouter(prefix="/tokens", tags=["tokens"])


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    expires_days: int | None = Field(default=None, ge=1, le=3650)


class TokenOut(BaseModel):
    id: uuid.UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None


class NewTokenOut(TokenOut):
    token: str = Field(description="Shown once; store it now.")


@router.get("", response_model=list[TokenOut])
async def list_tokens(scope: ScopeDep) -> list[TokenOut]:
    return [TokenOut.model_validate(t, from_attributes=True) for t in await list_api_tokens(scope)]


@router.post("", response_model=NewTokenOut, status_code=201)
async def create_token(body: TokenIn, scope: ScopeDep) -> NewTokenOut:
    token, plaintext = await create_api_token(scope, body.name, expires_days=body.expires_days)
    return NewTokenOut(
        **TokenOut.model_validate(token, from_attributes=True).model_dump(), token=plaintext
    )


@router.delete("/{token_id}", status_code=204)
async def revoke_token(token_id: uuid.UUID, scope: ScopeDep) -> None:
    await revoke_api_token(scope, token_id)
