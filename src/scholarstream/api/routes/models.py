"""Model setup as this user sees it: roles and their models (the user's choices, the server
defaults an admin sets, the settings), providers, the user's own OpenAI-compatible
endpoints, and the check ("Test") of a model."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, Field, model_validator

from scholarstream.api._deps import CurrentUser, ReleasedUser, RuntimeDep, ScopeDep
from scholarstream.db import OwnerScope
from scholarstream.db.tables import User
from scholarstream.errors import (
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
)
from scholarstream.llm import (
    CheckName,
    EndpointInput,
    ModelRegistry,
    RoleStatus,
    StructuredOutput,
    UserEndpoint,
    check_and_record,
    list_endpoint_models,
    registered_providers,
    split_model_string,
)
from scholarstream.runtime import Runtime

router = APIRouter(prefix="/models", tags=["models"])

_ROLE = re.compile(r"[a-z][a-z0-9_-]{0,63}")
RoleName = Annotated[str, Path(min_length=1, max_length=64, description="A model role.")]
EndpointName = Annotated[str, Path(min_length=1, max_length=40, description="An endpoint's name.")]


class ProviderOut(BaseModel):
    name: str
    label: str
    kind: Literal["built-in", "server", "endpoint"]
    """``server``: an OpenAI-compatible provider the server's settings configure;
    ``endpoint``: one of the user's own endpoints."""
    needs_api_key: bool
    has_credentials: bool


class EndpointOut(BaseModel):
    name: str
    base_url: str
    has_key: bool
    structured_output: StructuredOutput | None = Field(description="Your override, if any.")
    supports_tools: bool | None
    compact_prompt: bool | None
    effective_structured_output: StructuredOutput = Field(
        description="What requests use: your override, else what the check found, else native."
    )
    effective_supports_tools: bool
    checked_model: str | None
    checked_at: datetime | None
    check_ok: bool | None
    check_detail: str | None

    @classmethod
    def of(cls, endpoint: UserEndpoint) -> EndpointOut:
        capabilities = endpoint.capabilities()
        return cls(
            name=endpoint.name,
            base_url=endpoint.base_url,
            has_key=endpoint.has_key,
            structured_output=_structured(endpoint.structured_output),
            supports_tools=endpoint.supports_tools,
            compact_prompt=endpoint.compact_prompt,
            effective_structured_output=capabilities.structured_output,
            effective_supports_tools=capabilities.supports_tools,
            checked_model=endpoint.checked_model,
            checked_at=endpoint.checked_at,
            check_ok=endpoint.check_ok,
            check_detail=endpoint.check_detail,
        )


class ModelsOut(BaseModel):
    offline: bool = Field(description="No model for the default role, for you.")
    roles: list[RoleStatus]
    providers: list[ProviderOut]
    endpoints: list[EndpointOut]
    server_defaults: dict[str, str] = Field(description="Role -> model an admin chose.")
    is_admin: bool = Field(description="Whether you may set the server defaults.")


class ChoiceIn(BaseModel):
    model: str = Field(
        min_length=3,
        max_length=200,
        description="'provider:model', e.g. 'openai:gpt-4.1-mini' or 'mylocal:qwen2.5'.",
    )


class EndpointIn(BaseModel):
    base_url: str = Field(
        min_length=1, max_length=500, description="e.g. http://127.0.0.1:11434/v1 (Ollama)."
    )
    api_key: str | None = Field(
        default=None,
        max_length=1000,
        description="Stored encrypted, never returned. Left out: the stored key is kept; "
        "empty: it is removed.",
    )
    structured_output: StructuredOutput | None = None
    supports_tools: bool | None = None
    compact_prompt: bool | None = None


class EndpointModelsOut(BaseModel):
    models: list[str]


class CheckIn(BaseModel):
    """What to check: a role (the model it uses for you), a model string, or an endpoint
    (with ``model``, one of its models; without, the model it was last checked with or
    the first it lists)."""

    role: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, max_length=200)
    endpoint: str | None = Field(default=None, max_length=40)

    @model_validator(mode="after")
    def _one_subject(self) -> CheckIn:
        if self.role is None and self.model is None and self.endpoint is None:
            raise ValueError("name a role, a model or an endpoint to check")
        if self.role is not None and (self.model is not None or self.endpoint is not None):
            raise ValueError("name either a role, or a model and/or an endpoint")
        return self


class CheckStepOut(BaseModel):
    name: CheckName
    ok: bool
    detail: str
    seconds: float


class CheckOut(BaseModel):
    model: str
    usable: bool = Field(description="Reached, and it answers a plain request.")
    steps: list[CheckStepOut]
    structured_output: StructuredOutput = Field(description="What the check suggests.")
    supports_tools: bool


def _structured(value: str | None) -> StructuredOutput | None:
    return value if value in ("native", "tool", "prompted") else None  # type: ignore[return-value]


def _role(role: str) -> str:
    if not _ROLE.fullmatch(role):
        raise InvalidInputError(
            f"{role!r} is not a role name.",
            hint="Use a role such as 'default', 'fast' or 'synthesis' (lower-case letters, "
            "digits, '-' and '_').",
        )
    return role


async def _providers(runtime: Runtime, scope: OwnerScope) -> list[ProviderOut]:
    credentials = runtime.credentials
    out = [
        ProviderOut(
            name=p.name,
            label=p.label,
            kind="built-in",
            needs_api_key=p.needs_api_key,
            has_credentials=await credentials.has_credential(scope, p.name),
        )
        for p in registered_providers()
    ]
    builtin = {p.name for p in out}
    for name, configured in sorted(runtime.settings.llm.providers.items()):
        if name in builtin or not configured.base_url:
            continue
        out.append(
            ProviderOut(
                name=name,
                label=f"{name} (OpenAI-compatible, set by the server)",
                kind="server",
                needs_api_key=False,
                has_credentials=True,
            )
        )
    for endpoint in await runtime.models.choices.endpoints(scope):
        out.append(
            ProviderOut(
                name=endpoint.name,
                label=f"{endpoint.name} (your endpoint: {endpoint.base_url})",
                kind="endpoint",
                needs_api_key=False,
                has_credentials=True,
            )
        )
    return out


async def _validate_choice(
    models: ModelRegistry, runtime: Runtime, scope: OwnerScope, model: str
) -> str:
    """``model`` if this user can call it: a known provider (built-in, the server's, their
    endpoint) with a credential; else the error saying what to add."""
    model = model.strip()
    provider, name = split_model_string(model)
    if any(ch.isspace() or not ch.isprintable() for ch in model):
        raise InvalidInputError(
            f"{model!r} is not a model name.",
            hint="Write the model as 'provider:model' without spaces, e.g. 'ollama:qwen2.5'.",
        )
    if not await models.can_call(scope, model):
        # The credential store's error names the key and where to add it.
        await runtime.credentials.resolve(scope, provider)
    return f"{provider}:{name}"


@router.get("", response_model=ModelsOut)
async def list_models(user: CurrentUser, scope: ScopeDep, runtime: RuntimeDep) -> ModelsOut:
    """Roles with the model each uses for you and its status, providers (built-in, the
    server's OpenAI-compatible ones, your endpoints) and which have credentials."""
    models = runtime.models
    defaults = await models.choices.server_defaults(scope.session)
    return ModelsOut(
        offline=await models.offline_for(scope),
        roles=await models.status(scope),
        providers=await _providers(runtime, scope),
        endpoints=[EndpointOut.of(e) for e in await models.choices.endpoints(scope)],
        server_defaults={role: row.model for role, row in sorted(defaults.items())},
        is_admin=user.is_admin,
    )


@router.put("/roles/{role}", response_model=RoleStatus)
async def choose_model(
    role: RoleName, body: ChoiceIn, scope: ScopeDep, runtime: RuntimeDep
) -> RoleStatus:
    """Your model for ``role`` (``default`` serves every role you have not chosen)."""
    role = _role(role)
    model = await _validate_choice(runtime.models, runtime, scope, body.model)
    await runtime.models.choices.set_choice(scope, role, model)
    return await runtime.models.role_status(role, scope)


@router.delete("/roles/{role}", status_code=204)
async def forget_model(role: RoleName, scope: ScopeDep, runtime: RuntimeDep) -> Response:
    """Back to the server default (or the settings) for ``role``."""
    await runtime.models.choices.delete_choice(scope, _role(role))
    return Response(status_code=204)


def _admin(user: User) -> None:
    if not user.is_admin:
        raise PermissionDeniedError(
            "Only an administrator may set the server's default models.",
            hint="Choose your own model for the role instead (PUT /api/v1/models/roles/ROLE).",
        )


@router.put("/server-defaults/{role}", response_model=RoleStatus)
async def set_server_default(
    role: RoleName, body: ChoiceIn, user: CurrentUser, scope: ScopeDep, runtime: RuntimeDep
) -> RoleStatus:
    """Admins: the model ``role`` uses for every user who has not chosen one. It may name
    one of your endpoints: the other users' requests then go to it."""
    _admin(user)
    role = _role(role)
    model = await _validate_choice(runtime.models, runtime, scope, body.model)
    await runtime.models.choices.set_choice(scope, role, model, server_default=True)
    return await runtime.models.role_status(role, scope)


@router.delete("/server-defaults/{role}", status_code=204)
async def clear_server_default(
    role: RoleName, user: CurrentUser, scope: ScopeDep, runtime: RuntimeDep
) -> Response:
    _admin(user)
    await runtime.models.choices.delete_choice(scope, _role(role), server_default=True)
    return Response(status_code=204)


@router.get("/endpoints", response_model=list[EndpointOut])
async def list_endpoints(scope: ScopeDep, runtime: RuntimeDep) -> list[EndpointOut]:
    return [EndpointOut.of(e) for e in await runtime.models.choices.endpoints(scope)]


@router.put("/endpoints/{name}", response_model=EndpointOut)
async def save_endpoint(
    name: EndpointName, body: EndpointIn, scope: ScopeDep, runtime: RuntimeDep
) -> EndpointOut:
    """Add or change your OpenAI-compatible endpoint ``name`` (Ollama, llama.cpp's
    llama-server, vLLM, LM Studio, OpenRouter ...); its models are then ``name:MODEL``."""
    saved = await runtime.models.choices.save_endpoint(
        scope,
        EndpointInput(
            name=name,
            base_url=body.base_url,
            api_key=body.api_key,
            structured_output=body.structured_output,
            supports_tools=body.supports_tools,
            compact_prompt=body.compact_prompt,
        ),
    )
    return EndpointOut.of(saved)


@router.delete("/endpoints/{name}", status_code=204)
async def delete_endpoint(name: EndpointName, scope: ScopeDep, runtime: RuntimeDep) -> Response:
    await runtime.models.choices.delete_endpoint(scope, name)
    return Response(status_code=204)


@router.get("/endpoints/{name}/models", response_model=EndpointModelsOut)
async def endpoint_models(
    name: EndpointName, user: ReleasedUser, runtime: RuntimeDep
) -> EndpointModelsOut:
    """The models the endpoint serves (its ``GET /v1/models``)."""
    choices = runtime.models.choices
    async with runtime.database.session() as session:
        scope = OwnerScope(session, user.id)
        row = await choices.get_endpoint(scope, name)
        await choices.check_address(scope, row.base_url)
        credential = choices.credential(row)
    assert credential.base_url is not None  # an endpoint always has its address
    ids = await list_endpoint_models(credential.base_url, credential.api_key)
    return EndpointModelsOut(models=ids)


@router.post("/check", response_model=CheckOut)
async def check(body: CheckIn, user: ReleasedUser, runtime: RuntimeDep) -> CheckOut:
    """Test a model as its server runs it: reachable, a one-token completion, tool calls,
    JSON-schema output. What it finds is stored: on the endpoint (its structured output
    and tool support, used from then on unless you override them) and on your choice for
    the role."""
    models = runtime.models
    async with runtime.database.session() as session:
        model, role = await _check_subject(models, OwnerScope(session, user.id), body)
    report = await check_and_record(
        models, runtime.database, user.id, model, role=role, settings=runtime.settings
    )
    return CheckOut(
        model=report.model_string,
        usable=report.usable,
        steps=[
            CheckStepOut(name=s.name, ok=s.ok, detail=s.detail, seconds=s.seconds)
            for s in report.steps
        ],
        structured_output=report.suggested.structured_output,
        supports_tools=report.suggested.supports_tools,
    )


async def _check_subject(
    models: ModelRegistry, scope: OwnerScope, body: CheckIn
) -> tuple[str, str | None]:
    """The model string to check, and the role it is checked for (None: no role)."""
    if body.role is not None:
        role = _role(body.role)
        choice = await models.choice(role, scope)
        if choice is None:
            raise InvalidInputError(
                f"The {role!r} role has no model to check.",
                hint="Choose a model for it first (Settings -> Models).",
            )
        return choice.model, role
    if body.endpoint is None:
        assert body.model is not None  # the body's validator asks for one
        return body.model.strip(), None
    row = await models.choices.get_endpoint(scope, body.endpoint)
    if body.model:
        name = body.model.strip()
        prefix = f"{row.name}:"
        return (name if name.startswith(prefix) else prefix + name), None
    if row.checked_model:
        return row.checked_model, None
    credential = models.choices.credential(row)
    assert credential.base_url is not None
    listed = await list_endpoint_models(credential.base_url, credential.api_key)
    if not listed:
        raise NotFoundError(
            f"{row.base_url} lists no model to check.",
            hint="Load a model into the server, or name the model to check.",
        )
    return f"{row.name}:{listed[0]}", None
