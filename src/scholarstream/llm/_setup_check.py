"""A check of a model as a user set it up, remembered: on their choice for the role (the
role's status then says "checked OK at ..." or the failure) and on their endpoint (its
detected structured output and tool support, used from then on unless overridden)."""

from __future__ import annotations

import uuid

from scholarstream.db import Database, OwnerScope
from scholarstream.llm._check import CheckReport, check_model
from scholarstream.llm._providers import split_model_string
from scholarstream.llm._roles import DEFAULT_ROLE, ModelRegistry
from scholarstream.settings import Settings

__all__ = ["check_and_record", "check_summary"]


def check_summary(report: CheckReport) -> str:
    """One line: "all steps passed", or the first step that failed and why."""
    failed = next((step for step in report.steps if not step.ok), None)
    return "all steps passed" if failed is None else f"{failed.name}: {failed.detail}"


async def check_and_record(
    models: ModelRegistry,
    database: Database,
    owner_id: uuid.UUID,
    model: str,
    *,
    role: str | None,
    settings: Settings,
) -> CheckReport:
    """Check ``model`` for this user (for ``role``, when it is that role's model) with no
    session open while the model is asked, then store what was found."""
    async with database.session() as session:
        scope = OwnerScope(session, owner_id)
        choice = await models.choice(role, scope) if role else None
        resolved = await models.resolve_model_string(
            model,
            scope,
            role=role or DEFAULT_ROLE,
            endpoint_owner=choice.endpoint_owner if choice else None,
        )
    report = await check_model(resolved, settings=settings)
    detail = check_summary(report)
    async with database.session(write=True) as session:
        scope = OwnerScope(session, owner_id)
        if role is not None:
            await models.choices.record_choice_check(scope, role, model, report.usable, detail)
        row = await models.choices.endpoint_row(session, owner_id, split_model_string(model)[0])
        if row is not None:
            await models.choices.record_endpoint_check(
                row,
                model=model,
                ok=report.usable,
                detail=detail,
                detected=report.suggested if report.usable else None,
            )
    return report
