"""The rule of exclusion reasons. On title and abstract (and when the owner settles a
conflict) an exclusion's reason is one of the project's exclusion criteria, required when
the project has any; a project with none takes exclusions without a reason. At the
full-text stage a reason is required, a criterion or the reviewer's own words. A criterion
that exclusions give as their reason cannot be removed from the project (PRISMA counts
them by it); adding criteria is always free."""

from __future__ import annotations

from collections.abc import Sequence

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.screening.core._decisions import reasons_in_use
from scholarstream.screening.core._models import MAX_REASON_CHARS, DecisionEvent, ProjectSettings
from scholarstream.screening.core._words import counted


def exclusion_reason(
    settings: ProjectSettings, reason: str | None, *, free_text: bool = False
) -> str | None:
    """The exclusion reason to keep. On title and abstract (and settling a conflict) it is
    one of the project's exclusion criteria, required when the project has any; a project
    with none takes exclusions without a reason (PRISMA counts them as "No reason given").
    With ``free_text`` (the full-text stage) a criterion or any words."""
    text = " ".join((reason or "").split()) or None
    criteria = settings.exclusion_criteria
    if free_text:
        if text is not None and len(text) > MAX_REASON_CHARS:
            raise InvalidInputError(f"The reason must be at most {MAX_REASON_CHARS} characters.")
        match = next((c for c in criteria if text and c.casefold() == text.casefold()), None)
        return match or text
    if not criteria:
        if text is not None:
            raise InvalidInputError(
                "This project has no exclusion criteria, so an exclusion takes no reason: "
                f"“{text[:80]}” was not recorded.",
                hint="Exclude without a reason, or first add the reasons to the project's "
                "exclusion criteria (the project page, Edit the criteria) and exclude with one.",
            )
        return None
    if text is None:
        raise InvalidInputError(
            "An exclusion needs a reason: pick one of the project's exclusion criteria.",
            hint="Criteria: " + "; ".join(criteria),
        )
    match = next((c for c in criteria if c.casefold() == text.casefold()), None)
    if match is None:
        raise InvalidInputError(
            f"“{text[:80]}” is not one of the project's exclusion criteria.",
            hint="Pick one of: " + "; ".join(criteria),
        )
    return match


def decision_reason(
    settings: ProjectSettings, decision: str, reason: str | None, *, free_text: bool = False
) -> str | None:
    """The reason to keep with ``decision``: an exclusion's (``exclusion_reason``); any
    other decision takes none, and one sent with it is refused rather than dropped."""
    if decision == "exclude":
        return exclusion_reason(settings, reason, free_text=free_text)
    text = " ".join((reason or "").split())
    if text:
        raise InvalidInputError(
            f"Only an exclusion takes a reason: “{text[:80]}” was not recorded.",
            hint="Send the decision without a reason, or exclude with it.",
        )
    return None


def check_reasons_kept(
    before: Sequence[str], after: Sequence[str], events: Sequence[DecisionEvent]
) -> None:
    """``ConflictError`` when the new criteria (``after``) leave out one of the project's
    criteria (``before``) that exclusions give as their reason: PRISMA would count
    exclusions for a reason the project no longer has. Only criteria the project had are
    checked: exclusions without a reason, or with a reason that was never a criterion
    (recorded before the rule), never block a change, and adding criteria is always free."""
    kept = {c.casefold() for c in after}
    removed = {c.casefold(): c for c in before if c.casefold() not in kept}
    if not removed:
        return
    dropped: dict[str, int] = {}
    for reason, n in reasons_in_use(events).items():
        criterion = removed.get(reason.casefold())
        if criterion is not None:
            dropped[criterion] = dropped.get(criterion, 0) + n
    if dropped:
        said = "; ".join(
            f"“{criterion}” is the reason of {counted(n, 'exclusion')}"
            for criterion, n in dropped.items()
        )
        raise ConflictError(
            f"The criteria were not changed: {said}.",
            hint="Keep those criteria in the list, or first change those decisions (the project's "
            "records list shows them); to reword a criterion, add the new wording, move the "
            "exclusions to it, then remove the old one.",
        )
