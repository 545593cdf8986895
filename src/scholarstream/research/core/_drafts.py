"""Research drafts (seed 001, Phase 1 "Draft Creation").

=================  ===================================================================
field              source
=================  ===================================================================
title              user input; else written from the prompt by the title model
                   (``titles.model_title``, given here as ``generated_title``); else
                   (without a model, or when it fails) ``fallback_title(prompt)``
prompt             user input
selected_llms      user selection; default: every available model
synthesis_llm      user selection; default: the configured ``synthesis`` role's model,
                   else a Google model among the available ones (the seed's default),
                   else the first available model
external_reports   optional user-provided context
status             ``draft``
=================  ===================================================================
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from pydantic import Field

from scholarstream.errors import InvalidInputError
from scholarstream.research.core._base import CamelModel, utc_now
from scholarstream.research.core._lifecycle import ResearchStatus, conflict
from scholarstream.research.core._records import (
    ExternalReport,
    ModelString,
    Prompt,
    Research,
    ResearchFallback,
)
from scholarstream.research.core._title_text import TITLE_MAX_LENGTH, fallback_title

__all__ = [
    "GOOGLE_PROVIDERS",
    "TITLE_FEATURE",
    "TITLE_MAX_LENGTH",
    "DraftDefaults",
    "DraftEdit",
    "DraftRequest",
    "check_selected_llms",
    "create_draft",
    "default_synthesis_llm",
    "draft_defaults",
    "edit_draft",
    "fallback_title",
]

TITLE_FEATURE = "research.title"  # the usage ledger's feature of title calls
GOOGLE_PROVIDERS = frozenset({"google", "google-gla", "google-vertex", "gemini"})
"""Provider names of Google's models, the seed's default synthesis provider."""


_SELECTED_LLMS = (
    "The models that answer the prompt, each at most once; at most the server's "
    "research.max_selected_llms (8 unless configured)."
)


class DraftRequest(CamelModel):
    """The body of ``POST /research/draft``: what is left out takes its default."""

    prompt: Prompt
    title: str | None = None
    selected_llms: list[ModelString] | None = Field(default=None, description=_SELECTED_LLMS)
    synthesis_llm: ModelString | None = None
    external_reports: list[ExternalReport] = Field(default_factory=list)


class DraftEdit(CamelModel):
    """Changes to a draft: only the fields given are changed."""

    prompt: Prompt | None = None
    title: str | None = None
    selected_llms: list[ModelString] | None = Field(default=None, description=_SELECTED_LLMS)
    synthesis_llm: ModelString | None = None
    external_reports: list[ExternalReport] | None = None


class DraftDefaults(CamelModel):
    selected_llms: list[str]
    synthesis_llm: str | None
    title_model: str | None = Field(
        default=None,
        description="The model that writes a draft's title from the prompt when none is "
        "given; None: the title is cut from the prompt.",
    )


def check_selected_llms(selected: Sequence[str] | None, *, limit: int) -> None:
    """``InvalidInputError`` (422) when a draft selects more than ``limit`` distinct models
    (``research.max_selected_llms``): a server key on a router such as OpenRouter accepts
    any model name, so one research could otherwise fan out to any number of calls."""
    count = len(set(selected or ()))
    if count > limit:
        raise InvalidInputError(
            f"This research selects {count} models; a research may ask at most {limit}.",
            hint=f"Select at most {limit} models and send it again (the server's "
            "administrator sets the limit: research.max_selected_llms).",
        )


_SynthesisChoice = Callable[[Sequence[str], str | None], str | None]

# In order of preference; the first that names a model wins.
_SYNTHESIS_PREFERENCES: tuple[_SynthesisChoice, ...] = (
    lambda available, configured: configured,
    lambda available, configured: next(
        (m for m in available if m.partition(":")[0] in GOOGLE_PROVIDERS), None
    ),
    lambda available, configured: next(iter(available), None),
)


def default_synthesis_llm(
    available_models: Sequence[str], synthesis_model: str | None
) -> str | None:
    """``synthesis_model``: the model of the ``synthesis`` role, if one is configured."""
    choices = (choose(available_models, synthesis_model) for choose in _SYNTHESIS_PREFERENCES)
    return next((choice for choice in choices if choice), None)


def draft_defaults(
    available_models: Sequence[str],
    *,
    synthesis_model: str | None = None,
    title_model: str | None = None,
) -> DraftDefaults:
    return DraftDefaults(
        selected_llms=list(available_models),
        synthesis_llm=default_synthesis_llm(available_models, synthesis_model),
        title_model=title_model,
    )


def create_draft(
    request: DraftRequest,
    *,
    available_models: Sequence[str],
    synthesis_model: str | None = None,
    generated_title: str | None = None,
    title_fallback: str | None = None,
    research_id: uuid.UUID | None = None,
    now: datetime | None = None,
) -> Research:
    """``generated_title``: the title a model wrote from the prompt, used when the request
    has none. ``title_fallback``: why the model's title could not be used (the title is
    then cut from the prompt, and the fallback recorded in ``fallbacks``)."""
    moment = utc_now(now)
    defaults = draft_defaults(available_models, synthesis_model=synthesis_model)
    title = (request.title or "").strip()
    generated = (generated_title or "").strip() if not title else ""
    fell_back = not title and not generated and title_fallback is not None
    return Research(
        id=research_id or uuid.uuid4(),
        title=title or generated or fallback_title(request.prompt),
        title_generated=bool(generated),
        prompt=request.prompt,
        selected_llms=(
            request.selected_llms if request.selected_llms is not None else defaults.selected_llms
        ),
        synthesis_llm=request.synthesis_llm or defaults.synthesis_llm,
        external_reports=request.external_reports,
        status=ResearchStatus.DRAFT,
        fallbacks=(
            [ResearchFallback(feature=TITLE_FEATURE, reason=title_fallback or "")]
            if fell_back
            else []
        ),
        created_at=moment,
        updated_at=moment,
    )


def edit_draft(research: Research, edit: DraftEdit, *, now: datetime | None = None) -> Research:
    """The draft with the fields ``edit`` gives (not ``None``) changed; ``ConflictError``
    once it has been started. An empty title, or a title still cut from the old prompt (or
    written by a model from it) when the prompt changes, becomes the fallback title of the
    new prompt."""
    if research.status != ResearchStatus.DRAFT:
        raise conflict(
            research.status, f"Only a draft can be edited; this research is {research.status}."
        )
    update = {
        name: value
        for name in edit.model_fields_set
        if (value := getattr(edit, name)) is not None and name != "title"
    }
    prompt = edit.prompt or research.prompt
    title = (edit.title or "").strip()
    title_follows = research.title_generated or research.title == fallback_title(research.prompt)
    if title:
        update |= {"title": title, "title_generated": False}
    elif edit.title is not None or (edit.prompt is not None and title_follows):
        update |= {"title": fallback_title(prompt), "title_generated": False}
    if "title" in update:  # a title of the user's, or cut from the new prompt: no model's
        update["fallbacks"] = [f for f in research.fallbacks if f.feature != TITLE_FEATURE]
    update["updated_at"] = utc_now(now)
    return Research.model_validate({**research.model_dump(by_alias=False), **update})
