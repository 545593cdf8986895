"""Full records of the items on the page (seed 002: pages send summaries, ``retrieve_items``
fetches the rest on demand). Each item kind has a retriever, registered by kind; a page
whose items are of a new kind registers a retriever for it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from scholarstream.chat._builtin_payloads import (
    RETRIEVED_ITEMS,
    MissingItem,
    RetrievedItem,
    RetrievedItems,
)
from scholarstream.chat.tools._registry import (
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
    register_tool,
)
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._lookup import (
    ACCEPTED,
    LIBRARY,
    NCT,
    Lookup,
    classify,
    lookup,
)
from scholarstream.chat.tools.builtin._records import record_detail, record_text
from scholarstream.errors import InvalidInputError, ScholarStreamError
from scholarstream.papers import Record
from scholarstream.search import SearchRunStore

MAX_ITEMS = 20


@dataclass(frozen=True)
class Retrieved:
    record: Record
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass
class Retrieval:
    """``found`` by the page's id; ``problems``: id -> why it was not retrieved."""

    found: dict[str, Retrieved] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)


Retriever = Callable[[Sequence[str], ToolContext], Awaitable[Retrieval]]
"""Full records for ids of one kind. Raises ``ScholarStreamError`` when it can retrieve
nothing at all (its source is down, the page named no search run)."""

_RETRIEVERS: dict[str, Retriever] = {}


def register_item_retriever(kind: str, retriever: Retriever) -> Retriever:
    if kind in _RETRIEVERS:
        raise ValueError(f"an item retriever for {kind!r} is registered twice")
    _RETRIEVERS[kind] = retriever
    return retriever


def item_kinds() -> list[str]:
    return sorted(_RETRIEVERS)


# --- retrievers ----------------------------------------------------------------------------


def _retrieval(outcome: Lookup, what: str) -> Retrieval:
    """A lookup as a retrieval; if a source failed and nothing was found, that failure is
    the answer."""
    if outcome.failed and not outcome.found:
        raise next(iter(outcome.failed.values()))
    retrieval = Retrieval(
        found={i: Retrieved(f.record, {"source": f.source}) for i, f in outcome.found.items()}
    )
    for identifier in outcome.unrecognised:
        retrieval.problems[identifier] = f"not {what}"
    for identifier, asked in outcome.missing.items():
        retrieval.problems[identifier] = f"not found in {asked}"
    for identifier, error in outcome.failed.items():
        retrieval.problems[identifier] = f"not fetched: {error.message}"
    return retrieval


async def retrieve_library_records(ids: Sequence[str], ctx: ToolContext) -> Retrieval:
    return _retrieval(await lookup(ctx, ids, [LIBRARY.name]), "the id of a record in your library")


async def retrieve_trials(ids: Sequence[str], ctx: ToolContext) -> Retrieval:
    return _retrieval(await lookup(ctx, ids, [NCT.name]), "an NCT id")


async def retrieve_papers(ids: Sequence[str], ctx: ToolContext) -> Retrieval:
    return _retrieval(await lookup(ctx, ids), f"an identifier ({ACCEPTED})")


async def retrieve_search_results(ids: Sequence[str], ctx: ToolContext) -> Retrieval:
    """From the search run the page shows, scoped to its owner: with the score, reason and
    label the run gave each paper."""
    run_id = ctx.chat.search_run_id
    if run_id is None:
        raise InvalidInputError(
            "These are search results, but the page sent no search_run_id.",
            hint="The Search page must send search_run_id with its item summaries.",
        )
    try:
        run_uuid = uuid.UUID(run_id)
    except ValueError as exc:
        raise InvalidInputError(
            f"search_run_id {run_id!r} is not a search run id (a UUID).",
            hint="Send the id of the run the page shows.",
        ) from exc
    run = await SearchRunStore(ctx.services.database).get(ctx.owner_id, run_uuid)
    papers = {paper.id: paper for paper in (run.collection.papers if run.collection else [])}
    retrieval = Retrieval()
    for item_id in ids:
        paper = papers.get(item_id)
        if paper is None:
            retrieval.problems[item_id] = "not in the results of this search run"
            continue
        notes = {"score": f"{paper.score:.2f}", "sources": ", ".join(paper.sources)}
        if paper.reason:
            notes["reason"] = paper.reason
        if paper.label:
            notes["label"] = paper.label
        retrieval.found[item_id] = Retrieved(paper.record, notes)
    return retrieval


register_item_retriever("library_record", retrieve_library_records)
register_item_retriever("search_result", retrieve_search_results)
register_item_retriever("trial", retrieve_trials)
register_item_retriever("paper", retrieve_papers)

_KIND_BY_IDENTIFIER = {LIBRARY.name: "library_record", NCT.name: "trial"}


def _kind_of(item_id: str, ctx: ToolContext) -> str:
    """The summary's kind; for an id only in the selection, the kind every summary on the
    page shares, else what the id looks like."""
    summary = ctx.chat.item(item_id)
    if summary is not None:
        return summary.kind
    kinds = {item.kind for item in ctx.chat.item_summaries}
    if len(kinds) == 1:
        return kinds.pop()
    try:
        kind, _ = classify(item_id)
    except KeyError:
        return "paper"
    return _KIND_BY_IDENTIFIER.get(kind.name, "paper")


# --- the tool ------------------------------------------------------------------------------


class ItemsArgs(ToolArguments):
    ids: list[str] = Field(
        min_length=1,
        max_length=MAX_ITEMS,
        description="Ids of items on the page (from the item summaries or the selection).",
        json_schema_extra={"uniqueItems": True, "items": {"type": "string", "minLength": 1}},
    )


NOT_ON_PAGE = "not on this page"
# What the model is told besides a reason a person reads.
_FOR_THE_MODEL = {
    NOT_ON_PAGE: "only ids of the item summaries or the selection can be retrieved; "
    "get_article_details reads any PMID, DOI or arXiv id",
}


def _text(result: RetrievedItems, records: dict[str, Retrieved], ctx: ToolContext) -> str:
    lines = [f"Retrieved {len(result.items)} of {len(result.items) + len(result.not_found)}."]
    for item in result.items:
        retrieved = records[item.id]
        notes = "; ".join(f"{k}: {v}" for k, v in retrieved.annotations.items())
        key = ctx.evidence.key_for(retrieved.record, item.kind)
        lines.append(f"\n[{key}] id {item.id} ({item.kind})" + (f" — {notes}" if notes else ""))
        lines.append(record_text(retrieved.record))
    if result.not_found:
        lines.append("\nNot retrieved:")
        for missing in result.not_found:
            more = _FOR_THE_MODEL.get(missing.reason)
            lines.append(f"- {missing.id}: {missing.reason}" + (f" ({more})" if more else ""))
    return "\n".join(lines)


async def retrieve_items(
    params: dict[str, Any], ctx: ToolContext
) -> AsyncIterator[ToolProgress | ToolResult]:
    args = parse_arguments("retrieve_items", ItemsArgs, params)
    ids = list(dict.fromkeys(args.ids))
    on_page = {item.id for item in ctx.chat.item_summaries} | set(ctx.chat.selection)
    problems: dict[str, str] = dict.fromkeys((i for i in ids if i not in on_page), NOT_ON_PAGE)
    by_kind: dict[str, list[str]] = {}
    for item_id in ids:
        if item_id not in problems:
            by_kind.setdefault(_kind_of(item_id, ctx), []).append(item_id)
    found: dict[str, Retrieved] = {}
    kinds: dict[str, str] = {}
    errors: list[ScholarStreamError] = []
    for done, (kind, kind_ids) in enumerate(by_kind.items()):
        retriever = _RETRIEVERS.get(kind)
        if retriever is None:
            problems.update(dict.fromkeys(kind_ids, f"{kind} items cannot be fetched in full"))
            continue
        yield ToolProgress(
            stage="retrieving",
            message=f"Fetching {len(kind_ids)} {kind} item(s)",
            progress=round(done / len(by_kind), 3),
        )
        try:
            retrieval = await retriever(kind_ids, ctx)
        except ScholarStreamError as exc:
            errors.append(exc)
            problems.update(dict.fromkeys(kind_ids, f"could not be fetched: {exc.message}"))
            continue
        found.update(retrieval.found)
        kinds.update(dict.fromkeys(retrieval.found, kind))
        problems.update(retrieval.problems)
    if errors and not found:
        raise errors[0]
    result = RetrievedItems(
        items=[
            RetrievedItem(
                id=i,
                kind=kinds[i],
                record=record_detail(found[i].record),
                annotations=found[i].annotations,
            )
            for i in ids
            if i in found
        ],
        not_found=[
            MissingItem(id=i, reason=problems.get(i, "not found")) for i in ids if i not in found
        ],
    )
    yield ToolResult(
        text=_text(result, found, ctx),
        for_user=_for_user(result),
        payload=RETRIEVED_ITEMS.payload(result.model_dump(mode="json")),
    )


def _for_user(result: RetrievedItems) -> str:
    shown = len(result.items)
    asked = shown + len(result.not_found)
    records = f"{shown} full record{'' if shown == 1 else 's'}"
    if not result.not_found:
        return f"Fetched {records}."
    if not shown:
        return f"None of the {asked} asked for could be fetched: the list says why."
    return f"Fetched {records} of the {asked} asked for; the list says why not the others."


RETRIEVE_ITEMS = register_tool(
    ToolConfig(
        name="retrieve_items",
        description=f"Fetch the full records (abstract or trial summary, all identifiers, "
        f"authors, venue, outcomes...) of up to {MAX_ITEMS} items the page lists, by the ids "
        "in its item summaries or selection. Use it before answering a question the "
        "summaries cannot answer.",
        input_schema=input_schema(ItemsArgs),
        executor=retrieve_items,
        category="items",
        payload_type=RETRIEVED_ITEMS.name,
        is_global=False,
        command="items",
        command_argument="ids",
        command_summary="Show the full records of items on this page, by their ids",
    )
)
