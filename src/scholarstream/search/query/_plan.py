"""``QueryPlan``: what a strategy searches, before any source's syntax: concept blocks
(AND-ed, their terms OR-ed), exclusions, study types, languages and how strict the
match is. The per-source renderers in ``syntax`` write it out."""

from __future__ import annotations

from dataclasses import dataclass

from scholarstream.search.core import ConceptBlock


@dataclass(frozen=True)
class QueryPlan:
    blocks: tuple[ConceptBlock, ...]
    exclude: tuple[str, ...] = ()
    study_types: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()  # ISO 639-1 codes
    title_blocks: int = 0
    """The first ``title_blocks`` blocks are matched in titles only, where a source can."""
    condition_block: int | None = None
    """Index of the block naming the condition (a trial registry's condition field)."""
    intervention_block: int | None = None
    all_fields: bool = False
    """Search every field where a source distinguishes (PubMed [All Fields])."""
    limit: int = 50

    def in_title(self, index: int) -> bool:
        return index < self.title_blocks

    @property
    def main_terms(self) -> list[str]:
        """The first term of every block: the concept as the user put it."""
        return [block.terms[0] if block.terms else block.concept for block in self.blocks]
