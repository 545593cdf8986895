"""A conversation's citation keys: every record its tools showed, under the key it keeps
for the whole conversation. A turn starts from the stored state (``builder``), its tools
key what they show through it, and the finished turn is folded back (``after_turn``): a
work shown again keeps its key, a new work gets the next one, and a key once given is not
given to another work, not even after its record is dropped to keep the state bounded
(``CONVERSATION_RECORDS``). Only once all 999 keys a citation can have are given does a
new work get a dropped record's key: one no answer cited first, the longest dropped first."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scholarstream.grounding.core import EvidenceItem, PackBuilder
from scholarstream.papers import Paper
from scholarstream.prompt_fences import fenced_data

# The records a conversation keeps: enough for many turns of searches (a turn's tools show
# 10 to 60), small enough to store with the conversation (about 1 MB at most).
CONVERSATION_RECORDS = 200
# The records cited earlier that the model is reminded of, the most recently cited.
PROMPT_CITED_RECORDS = 30
PROMPT_TITLE_CHARS = 160
# Authors kept of a record: the reference list shows three; an author-year reference the
# model writes is matched against any of them.
STORED_AUTHORS = 50

EARLIER_CITATIONS_HEADING = "## Records cited earlier in this conversation"
EARLIER_CITATIONS_NOTE = (
    "Every record keeps its citation key for the whole conversation. These are the "
    "records earlier answers cited: to use one again, cite it by the key listed here; a "
    "record the tools show again keeps its key, and new records get new keys."
)


class ConversationRecord(BaseModel):
    """One record of a conversation under its key, with the last turns that used it."""

    model_config = ConfigDict(extra="forbid")

    item: EvidenceItem
    used: int = Field(default=0, ge=0, description="The last turn that showed or cited it.")
    cited: int | None = Field(default=None, description="The last turn whose answer cited it.")


class ConversationEvidence(BaseModel):
    """The records a conversation's answers may cite, in key order; ``next_key`` is the key
    the next new work gets, ``turns`` how many turns were folded in; ``retired`` and
    ``retired_cited`` the keys of the records dropped (never cited, cited), the longest
    dropped first."""

    model_config = ConfigDict(extra="forbid")

    records: list[ConversationRecord] = Field(default_factory=list)
    next_key: int = Field(default=1, ge=1)
    turns: int = Field(default=0, ge=0)
    retired: list[int] = Field(default_factory=list)
    retired_cited: list[int] = Field(default_factory=list)

    @model_validator(mode="after")
    def _next_key_after_every_record(self) -> ConversationEvidence:
        highest = max((r.item.key for r in self.records), default=0)
        self.next_key = max(self.next_key, highest + 1)
        return self

    def builder(self) -> PackBuilder:
        """What a turn's tools key records with: the conversation's records under their
        keys, new works after ``next_key``."""
        return PackBuilder.continuing(
            (r.item for r in self.records),
            self.next_key,
            reusable=[*self.retired, *self.retired_cited],
        )

    def after_turn(
        self, turn: PackBuilder, cited: Iterable[int], limit: int = CONVERSATION_RECORDS
    ) -> ConversationEvidence:
        """This state with a finished turn folded in: the records ``turn`` showed and the
        keys its answer ``cited``. ``turn`` began from this state or an earlier one (two
        turns of one conversation at once): a work this state gave a key since keeps this
        state's key, and a new work whose turn key another work took gets the next key.
        Past ``limit`` the records used longest ago are dropped, those never cited first;
        their keys are retired (see the module's note)."""
        number = self.turns + 1
        merged = self.builder()
        shown = turn.pack()
        moved: dict[int, int] = {}
        for key in turn.shown:
            item = shown.item(key)
            if item is not None:
                moved[key] = merged.key_for(item.paper, item.origin)
        pack = merged.pack()
        cited_now = {moved.get(key, key) for key in cited} & pack.keys
        used_now = set(moved.values()) | cited_now
        before = {r.item.key: r for r in self.records}
        records = []
        for item in pack.items:
            old = before.get(item.key)
            records.append(
                ConversationRecord(
                    item=item.model_copy(update={"paper": _stored(item.paper)}),
                    used=number if item.key in used_now else (old.used if old else number),
                    cited=number if item.key in cited_now else (old.cited if old else None),
                )
            )
        retired = [k for k in self.retired if k not in pack.keys]
        retired_cited = [k for k in self.retired_cited if k not in pack.keys]
        if len(records) > limit:
            dropped = sorted(records, key=_keep_rank)[: len(records) - limit]
            retired += [r.item.key for r in dropped if r.cited is None]
            retired_cited += [r.item.key for r in dropped if r.cited is not None]
            gone = {r.item.key for r in dropped}
            records = [r for r in records if r.item.key not in gone]
        return ConversationEvidence(
            records=records,
            next_key=merged.next_key,
            turns=number,
            retired=retired,
            retired_cited=retired_cited,
        )

    def cited_earlier(self, limit: int = PROMPT_CITED_RECORDS) -> list[EvidenceItem]:
        """The records earlier answers cited, the ``limit`` most recently cited, in key order."""
        cited = [r for r in self.records if r.cited is not None]
        recent = sorted(cited, key=lambda r: (r.cited or 0, r.item.key), reverse=True)[:limit]
        return sorted((r.item for r in recent), key=lambda item: item.key)


def _keep_rank(record: ConversationRecord) -> tuple[bool, int, int, int]:
    """Lowest first is dropped first: never cited, then cited longest ago; used longest ago."""
    cited = record.cited is not None
    return cited, record.cited or 0, record.used, record.item.key


def _stored(paper: Paper) -> Paper:
    """What the conversation keeps of a record: what its citations are checked against and
    its reference shows (identifiers, title, abstract, authors, venue, year), not its
    headings, keywords, links and provenance."""
    return paper.model_copy(
        update={
            "authors": paper.authors[:STORED_AUTHORS],
            "mesh_terms": [],
            "keywords": [],
            "links": [],
            "provenance": [],
        }
    )


def earlier_citations(evidence: ConversationEvidence) -> str | None:
    """For the model's instructions: the records earlier answers cited, one line each
    under its key, fenced as data (titles come from the sources); None before any."""
    items = evidence.cited_earlier()
    if not items:
        return None
    lines = []
    for item in items:
        paper = item.paper
        title = paper.title
        if len(title) > PROMPT_TITLE_CHARS:
            title = title[:PROMPT_TITLE_CHARS].rsplit(" ", 1)[0] + " …"
        where = ", ".join(p for p in (paper.venue, str(paper.year) if paper.year else None) if p)
        lines.append(f"[{item.key}] {title}" + (f" ({where})" if where else ""))
    return f"{EARLIER_CITATIONS_HEADING}\n{EARLIER_CITATIONS_NOTE}\n" + fenced_data(
        "The records cited", "\n".join(lines)
    )
