"""``library search|show|delete|merges|split|find-duplicates``: the local library from the
terminal."""

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime
from scholarstream.cli.library_labels_cmd import (
    CollectionOption,
    NoteOption,
    TagOption,
    TypeOption,
    add_label_commands,
    library_query,
    records,
)

if TYPE_CHECKING:
    import uuid

    from scholarstream.runtime import Runtime
    from scholarstream.sources.library import (
        DuplicateGroup,
        DuplicateScan,
        LibraryItem,
        LibraryMergeInfo,
        LibraryPage,
        LibraryQuery,
        MergedRecord,
        MergePage,
        SplitResult,
    )

library_app = typer.Typer(help="Your local library of imported records.", no_args_is_help=True)


def _authors(item: "LibraryItem") -> str:
    from scholarstream.papers import Paper

    record = item.record
    if not isinstance(record, Paper) or not record.authors:
        return record.sponsor or "" if not isinstance(record, Paper) else ""
    first = record.authors[0].family or record.authors[0].name
    return first + (" et al." if len(record.authors) > 1 else "")


def _found_line(page: "LibraryPage", query: "LibraryQuery", collection: str | None) -> str:
    """ "3 records have “taurine”, best first · 2 more related by meaning"."""
    filters = query.filters_described(collection)
    among = f" {filters}" if filters else ""
    if not query.has_words:
        return f"{records(page.total)}{among or ' in your library'}"
    verb = "has" if page.matching == 1 else "have"
    words = query.text.strip()
    # Records are ranked by any of the words (those with more of them first).
    which = "one or more of the words " if len(words.split()) > 1 else ""
    line = f"{records(page.matching)}{among} {verb} {which}“{words}”"
    if page.matching > 1:
        line += ", best first"
    if page.related:
        line += f" · {page.related:,} more related by meaning (without the words)"
    return line


def _nothing_found(query: "LibraryQuery", collection: str | None) -> str:
    tries = []
    if query.has_words:
        tries.append("fewer or other words")
    if query.year_from or query.year_to or query.publication_type or query.has_labels:
        tries.append("fewer filters")
    if not tries:
        return "Your library is empty: import a file with `scholarstream import FILE`."
    return f"No record matches {query.described(collection)}. Try {' or '.join(tries)}."


def _item_cell(item: "LibraryItem") -> Text:
    """Title, then who, when and how to name the record, in one cell (it wraps at any
    width: no column is cut at 80)."""
    cell = Text(item.record.title, style="bold")
    about = [_authors(item), str(item.record.year or ""), item.reference]
    cell.append("\n" + " · ".join(part for part in about if part), style="dim")
    return cell


@library_app.command("search")
def library_search(
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(help="Words to rank by, quoted or not; none lists newest first."),
    ] = None,
    year_from: Annotated[int | None, typer.Option("--year-from")] = None,
    year_to: Annotated[int | None, typer.Option("--year-to")] = None,
    publication_type: TypeOption = None,
    collection: CollectionOption = None,
    tag: TagOption = None,
    has_note: NoteOption = None,
    related: Annotated[
        bool,
        typer.Option(
            "--related/--words-only",
            help="Also list the records related by meaning that lack the words (after the "
            "others, marked), or only the records that have the words.",
        ),
    ] = True,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Records per page, 1 to 500.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Records to skip (the next page).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Search title, abstract, keywords and MeSH terms: the records that have the words
    first (ranked by words and meaning), then those related by meaning alone."""

    async def search(runtime: "Runtime") -> "tuple[LibraryQuery, LibraryPage, str | None]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        query = await library_query(
            runtime,
            owner,
            text=" ".join(words or ()),
            year_from=year_from,
            year_to=year_to,
            publication_type=publication_type,
            collection=collection,
            tag=tag,
            has_note=has_note,
            related=related,
            limit=limit,
            offset=offset,
        )
        page = await runtime.library.search(owner, query)
        name = None
        if query.collection is not None:
            name = (await runtime.library.labels.collection(owner, query.collection)).name
        return query, page, name

    query, page, name = run_with_runtime(ctx, search)
    if as_json:
        typer.echo(page.model_dump_json(indent=2))
        return
    if page.total == 0:
        console.print(escape(_nothing_found(query, name)))
        return
    console.print(escape(_found_line(page, query, name)))
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for number, item in enumerate(page.items, start=page.offset + 1):
        if item.match == "meaning" and (number == page.matching + 1):
            table.add_row("", Text("\nRelated by meaning (without the search words):", "italic"))
        table.add_row(str(number), _item_cell(item))
    console.print(table)
    shown_to = page.offset + len(page.items)
    if shown_to < page.total:
        console.print(f"Showing {page.offset + 1}-{shown_to}; next page: --offset {shown_to}")


_REFERENCE_HELP = "The record's identifier as `library search` lists it: a DOI, PMID:…, NCT…"
Reference = Annotated[str, typer.Argument(help=_REFERENCE_HELP, metavar="IDENTIFIER")]


@library_app.command("show")
def library_show(ctx: typer.Context, reference: Reference, user: UserOption = "local") -> None:
    """Print one record as JSON."""

    async def show(runtime: "Runtime") -> "LibraryItem":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.find(owner, reference)

    item = run_with_runtime(ctx, show)
    typer.echo(json.dumps(item.model_dump(mode="json", exclude_none=True), indent=2))


@library_app.command("delete")
def library_delete(ctx: typer.Context, reference: Reference, user: UserOption = "local") -> None:
    """Remove one record from the library."""

    async def delete(runtime: "Runtime") -> str:
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        item = await runtime.library.find(owner, reference)
        await runtime.library.delete(owner, item.id)
        return item.record.title

    title = run_with_runtime(ctx, delete)
    console.print(f"Deleted “{escape(title)}”.")


# -- merges ---------------------------------------------------------------------------------

_UNDO = "Undo a merge with `scholarstream library split ID` (the id in the first column)."
_ID_LABELS = {"doi": "DOI", "pmid": "PMID", "pmcid": "PMCID", "arxiv_id": "arXiv"}


def _identifiers(side: "MergedRecord", *, unlike: "MergedRecord | None" = None) -> list[str]:
    """The side's identifiers by name; with ``unlike``, only those that differ from its."""
    shown = []
    for name, label in _ID_LABELS.items():
        value = side.identifiers.get(name)
        if value is None:
            if unlike is not None and name in unlike.identifiers:
                shown.append(f"no {label}")
            continue
        if unlike is None or unlike.identifiers.get(name) != value:
            shown.append(f"{label} {value}")
    return shown


def _side_line(side: "MergedRecord", *, unlike: "MergedRecord | None" = None) -> str:
    """Where a side came from and the identifiers that tell it apart: for the copy, only
    what differs from the kept record (its title and year too, when they do)."""
    parts = [f"from {side.source_file}" if side.source_file else "from no file"]
    if unlike is not None:
        if side.year != unlike.year:
            parts.append(f"year {side.year or 'none'}")
        named = _identifiers(side, unlike=unlike)
        same = "the same identifiers" if any(side.identifiers.values()) else "no identifiers"
        parts.extend(named or [same])
        if _title_key(side.title) != _title_key(unlike.title):
            parts.append(f"titled “{side.title}”")
    else:
        parts.extend(_identifiers(side))
    return " · ".join(parts)


def _title_key(title: str) -> str:
    from scholarstream.papers import normalize_title

    return normalize_title(title)


def _merge_rows(
    table: Table, short: str, kept: "MergedRecord", copy: "MergedRecord", why: str
) -> None:
    year = f" ({kept.year})" if kept.year else ""
    cell = Text(f"{kept.title}{year}", style="bold")
    cell.append(f"\nmatched on: {why}")
    cell.append(f"\nkept:  {_side_line(kept)}", style="dim")
    cell.append(f"\ncopy:  {_side_line(copy, unlike=kept)}", style="dim")
    table.add_row(short, cell)


def _merge_table(merges: "list[LibraryMergeInfo]") -> Table:
    from scholarstream.sources.library import short_id

    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="cyan")
    table.add_column(ratio=1)
    for merge in merges:
        _merge_rows(table, short_id(merge.id), merge.kept, merge.absorbed, merge.evidence)
        table.add_row("", "")
    return table


def _group_table(groups: "list[DuplicateGroup]") -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="dim", justify="right")
    table.add_column(ratio=1)
    for number, group in enumerate(groups, start=1):
        for copy in group.copies:
            _merge_rows(table, str(number), group.kept, copy.record, copy.evidence)
        table.add_row("", "")
    return table


@library_app.command("merges")
def library_merges(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Merges per page, 1 to 500.")] = 50,
    offset: Annotated[int, typer.Option(min=0, help="Merges to skip (the next page).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """List the duplicates merged into other records, newest first: what matched, and
    what tells the two apart (the file each came from, identifiers only one had)."""

    async def merges(runtime: "Runtime") -> "MergePage":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.merges(owner, offset=offset, limit=limit)

    page = run_with_runtime(ctx, merges)
    if as_json:
        typer.echo(page.model_dump_json(indent=2))
        return
    if page.total == 0:
        console.print("No merged duplicates in your library.")
        return
    console.print(f"{records(page.total, 'merged duplicate')}, newest first:\n")
    console.print(_merge_table(page.items))
    shown_to = page.offset + len(page.items)
    if shown_to < page.total:
        console.print(f"Showing {page.offset + 1}-{shown_to}; next page: --offset {shown_to}")
    console.print(
        "Undo a merge with `scholarstream library split ID` (the id in the first column)."
    )


@library_app.command("merge")
def library_merge(
    ctx: typer.Context,
    kept: Annotated[
        str,
        typer.Argument(
            help="The record to keep: its identifier (DOI, PMID:…) as `library search` lists it.",
            metavar="KEPT",
        ),
    ],
    copies: Annotated[
        list[str],
        typer.Argument(help="The records to merge into it.", metavar="COPY..."),
    ],
    user: UserOption = "local",
) -> None:
    """Merge records of one work by hand, when the rules keep them apart (a venue written
    two ways, a missing year): the kept record keeps its title, authors and identifiers,
    and each copy fills only what it lacks. `library merges` lists them; `library split`
    undoes one."""

    async def merge(runtime: "Runtime") -> "list[LibraryMergeInfo]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        kept_id = (await runtime.library.find(owner, kept)).id
        copy_ids = [(await runtime.library.find(owner, copy)).id for copy in copies]
        return await runtime.library.merge(owner, kept_id, copy_ids)

    made = run_with_runtime(ctx, merge)
    console.print(f"Merged {records(len(made), 'copy', 'copies')} into the record you keep:")
    console.print(_merge_table(made))
    console.print("`scholarstream library split MERGE_ID` undoes one.")


@library_app.command("split")
def library_split(
    ctx: typer.Context,
    merge_id: Annotated[
        str,
        typer.Argument(
            help="The merge's id as `library merges` lists it (or any unique start of it).",
            metavar="MERGE_ID",
        ),
    ],
    user: UserOption = "local",
) -> None:
    """Undo one merge: the merged copy becomes its own record again, and the two records
    are never merged again."""

    async def split(runtime: "Runtime") -> "SplitResult":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        merge: uuid.UUID = await runtime.library.find_merge(owner, merge_id)
        return await runtime.library.split(owner, merge)

    result = run_with_runtime(ctx, split)
    restored, kept = result.merge.absorbed, result.merge.kept
    console.print(
        f"Split: “{escape(result.restored.record.title)}” is its own record again "
        f"({escape(_side_line(restored))}), apart from the record it was merged into "
        f"({escape(_side_line(kept))}). They will not be merged again."
    )


@library_app.command("find-duplicates")
def library_find_duplicates(
    ctx: typer.Context,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Only list the groups that would be merged, with the evidence."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Compare the whole library and merge the copies it already holds (each into the
    oldest record of its work). Every merge can be undone with `library split`."""

    async def scan(runtime: "Runtime") -> "DuplicateScan":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.find_duplicates(owner, dry_run=dry_run)

    result = run_with_runtime(ctx, scan)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    compared = f"Compared {records(result.checked)}"
    if not result.groups:
        console.print(f"{compared}: no duplicates found.")
        return
    works = records(result.groups, "work")
    if result.dry_run:
        console.print(
            f"{compared}: {records(result.copies, 'copy', 'copies')} of {works} would be "
            "merged (nothing was merged). Each group: the record kept, what matched, and "
            "what differs.\n"
        )
        console.print(_group_table(result.candidates))
        if len(result.candidates) < result.groups:
            console.print(f"The first {len(result.candidates)} of {works} are listed.")
        console.print("Merge them with `scholarstream library find-duplicates`.")
        return
    console.print(
        f"{compared}: merged {records(result.merged, 'duplicate')} of {works}. Merges made:\n"
    )
    console.print(_merge_table(result.merges))
    console.print(
        "Undo a merge with `scholarstream library split ID` (the id in the first column)."
    )


def register(app: typer.Typer) -> None:
    add_label_commands(library_app)
    app.add_typer(library_app, name="library")
