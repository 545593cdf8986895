"""Themes named by a model; everything else as ``RuleResultOrganizer`` does it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, Field
from pydantic_ai import Agent

from scholarstream.search._bounds import Items, Text
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog
from scholarstream.search._llm import SkillLLM
from scholarstream.search.core import PaperGroup, ScoredPaper
from scholarstream.search.organize._organizer import RuleResultOrganizer
from scholarstream.search.organize._themes import MAX_THEMES, OTHER_THEME, rule_themes

_MAX_PAPERS = 60  # beyond this the titles cost more than the themes are worth
FEATURE = "search.organize"


# The schema asks for at least one theme, each with a label and a paper (a small model
# answered ``{"themes": []}``); validation stays loose, ``_validated`` sorts the answer out.
class _Theme(BaseModel):
    label: Annotated[str, Text(80, least=1)] = Field(description="2-5 words naming the theme.")
    papers: Annotated[list[int], Items(_MAX_PAPERS, least=1, cut=False)] = Field(
        description="Numbers of the papers in this theme."
    )


class _Themes(BaseModel):
    themes: Annotated[list[_Theme], Items(MAX_THEMES, least=1)] = Field(
        description=f"At most {MAX_THEMES} themes."
    )


_AGENT: Agent[None, _Themes] = Agent(
    output_type=_Themes,
    instructions=(
        "You organise search results for a researcher. Group the numbered papers into at "
        f"most {MAX_THEMES} themes that a researcher would find useful (sub-topics, "
        "populations, methods). Each paper goes into at most one theme; leave papers that "
        "fit no theme out. Use only the numbers given."
    ),
)


class LLMResultOrganizer(RuleResultOrganizer):
    def __init__(self, llm: SkillLLM, *, fallbacks: FallbackLog | None = None) -> None:
        self.llm = llm
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()

    async def themes(self, papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
        if len(papers) < 3:
            return rule_themes(papers)
        shown = list(papers[:_MAX_PAPERS])
        prompt = "\n".join(f"{n}. {p.record.title}" for n, p in enumerate(shown, start=1))
        try:
            answer = await self.llm.structured(_AGENT, prompt, feature=FEATURE)
        except FALLBACK_ERRORS as exc:
            self.fallbacks.failed(FEATURE, exc)
            return rule_themes(papers)
        groups = _validated(answer, shown, papers)
        if groups is None:
            self.fallbacks.unusable(FEATURE, "no theme named any paper given")
            return rule_themes(papers)
        return groups


def _validated(
    answer: _Themes, shown: Sequence[ScoredPaper], papers: Sequence[ScoredPaper]
) -> list[PaperGroup] | None:
    """Numbers out of range or given twice are ignored; unplaced papers go to Other.
    ``None`` when no theme is left (the answer cannot be used)."""
    placed: set[str] = set()
    groups: list[PaperGroup] = []
    for theme in answer.themes[:MAX_THEMES]:
        ids = []
        for number in theme.papers:
            if 1 <= number <= len(shown) and shown[number - 1].id not in placed:
                ids.append(shown[number - 1].id)
                placed.add(shown[number - 1].id)
        label = " ".join(theme.label.split())[:80]
        if ids and label:
            groups.append(PaperGroup(key=f"theme-{len(groups) + 1}", label=label, paper_ids=ids))
    if not groups:
        return None
    rest = [p.id for p in papers if p.id not in placed]
    if rest:
        groups.append(PaperGroup(key=OTHER_THEME, label="Other", paper_ids=rest))
    return groups
