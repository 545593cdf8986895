"""Starting a research (seed 001, Phase 1 "Start Research", ``POST /research``).

Validation: at least one model selected, and an API key for every model the research
will call. The synthesis model is checked too when the synthesis can run (more than one
model, or external reports): the seed checks the selected models only, but a missing
synthesis key found after every model has answered would waste their calls.

Actions: status ``processing``, ``started_at`` set, one ``pending`` result per selected
model, one ``llm.call`` per selected model, and the ``research.started`` event.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from scholarstream.errors import InvalidInputError, MissingCredentialsError
from scholarstream.research.core._base import utc_now
from scholarstream.research.core._changes import ResearchChange, changed
from scholarstream.research.core._events import LLMCallEvent
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import LLMResult, Research

__all__ = [
    "CredentialCheck",
    "check_can_start",
    "models_needing_credentials",
    "start_research",
    "synthesis_may_run",
]

CredentialCheck = Callable[[str], bool]
"""``has_credentials(model_string)``: whether this user can call the model (their own key,
the server's, or a provider that needs none)."""


def synthesis_may_run(research: Research) -> bool:
    """Whether the skip logic could ask for a synthesis once the models have answered."""
    return len(research.selected_llms) > 1 or bool(research.external_reports)


def models_needing_credentials(research: Research) -> list[str]:
    models = list(research.selected_llms)
    if synthesis_may_run(research) and research.synthesis_llm is not None:
        models.append(research.synthesis_llm)
    return list(dict.fromkeys(models))


def check_can_start(research: Research, has_credentials: CredentialCheck) -> None:
    """Raise ``ConflictError`` unless a draft, ``InvalidInputError`` for a missing model
    choice, ``MissingCredentialsError`` naming every model without a key."""
    if research.status != ResearchStatus.DRAFT:
        raise conflict(
            research.status, f"Only a draft can be started; this research is {research.status}."
        )
    if not research.selected_llms:
        raise InvalidInputError(
            "Select at least one model to start the research.",
            hint="Tick the models to ask in the draft. No model to tick? Set one up under "
            "Settings → Models.",
        )
    if synthesis_may_run(research) and research.synthesis_llm is None:
        raise InvalidInputError(
            "Choose a synthesis model: with several models or external reports the answers "
            "are synthesised.",
            hint="Choose the synthesis model in the draft, or set up a synthesis model under "
            "Settings → Models.",
        )
    missing = [m for m in models_needing_credentials(research) if not has_credentials(m)]
    if missing:
        providers = sorted({m.partition(":")[0] for m in missing})
        raise MissingCredentialsError(
            f"No API key for {', '.join(missing)}.",
            hint=f"Add your key for {', '.join(providers)} under Settings → Your API keys, "
            "ask the server's administrator to set one "
            "(SCHOLARSTREAM_LLM__PROVIDERS__<PROVIDER>__API_KEY), or choose other models.",
        )


def start_research(
    research: Research, *, has_credentials: CredentialCheck, now: datetime | None = None
) -> ResearchChange:
    check_can_start(research, has_credentials)
    moment = utc_now(now)
    processing = transition(research, ResearchStatus.PROCESSING, now=moment).model_copy(
        update={"llm_results": [LLMResult(model=model) for model in research.selected_llms]}
    )
    calls = [
        LLMCallEvent(research_id=research.id, model=model, attempt=1)
        for model in research.selected_llms
    ]
    return changed(research, processing, now=moment, llm_calls=calls)
