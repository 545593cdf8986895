"""``library collections|collection|tags|tag|note``: what a person adds to their records
(collections, tags, a note per record), from the terminal.

Records are named by their identifiers (DOI, PMID:…, NCT…, as ``library search`` lists
them) or by a search (``--query`` and the filters): every record it lists."""

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime

if TYPE_CHECKING:
    import uuid

    from scholarstream.runtime import Runtime
    from scholarstream.sources.library import (
        CollectionChange,
        CollectionInfo,
        ExportAdvice,
        FacetCount,
        LibraryItem,
        LibraryQuery,
        TagChange,
    )


def records(count: int, noun: str = "record", plural: str | None = None) -> str:
    """ "1 record", "12 records", "1,834 records"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


# -- the search options shared by search, export, collection add and tag ---------------------

QueryOption = Annotated[
    str, typer.Option("--query", help="Search words: take every record that has them.")
]
YearFrom = Annotated[int | None, typer.Option("--year-from")]
YearTo = Annotated[int | None, typer.Option("--year-to")]
TypeOption = Annotated[str | None, typer.Option("--type", help="Publication type, e.g. 'Review'.")]
CollectionOption = Annotated[
    str | None, typer.Option("--collection", help="Only the records of this collection (name).")
]
TagOption = Annotated[str | None, typer.Option("--tag", help="Only the records with this tag.")]
NoteOption = Annotated[
    bool | None,
    typer.Option(
        "--has-note/--no-note", help="Only the records with a note, or only those without."
    ),
]
RelatedTaking = Annotated[
    bool,
    typer.Option(
        "--related",
        help="With --query: take the records related by meaning (without the words) too.",
    ),
]


def advice() -> "ExportAdvice":
    """How this command line names the ways out of a search that matched nothing."""
    from scholarstream.sources.library import ExportAdvice

    return ExportAdvice(
        related="add --related to take those too",
        search="`scholarstream library search` with the same words shows what it holds",
    )


async def library_query(
    runtime: "Runtime",
    owner: "uuid.UUID",
    *,
    text: str = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    collection: str | None = None,
    tag: str | None = None,
    has_note: bool | None = None,
    related: bool = False,
    limit: int = 20,
    offset: int = 0,
) -> "LibraryQuery":
    """The search the options describe, its collection named by name (any case) or id."""
    from scholarstream.sources.library import LibraryQuery

    collection_id = None
    if collection is not None:
        collection_id = (await runtime.library.labels.find_collection(owner, collection)).id
    return LibraryQuery(
        text=text,
        year_from=year_from,
        year_to=year_to,
        publication_type=publication_type,
        collection=collection_id,
        tag=tag,
        has_note=has_note,
        related=related,
        limit=limit,
        offset=offset,
    )


async def _named_records(
    runtime: "Runtime", owner: "uuid.UUID", references: list[str]
) -> "list[uuid.UUID]":
    return [(await runtime.library.find(owner, reference)).id for reference in references]


def _search_or_records(text: str, references: list[str], *, what: str) -> None:
    from scholarstream.errors import InvalidInputError

    if not references and not text:
        raise InvalidInputError(
            f"Name the records to {what}: their identifiers, or a search (--query WORDS).",
            hint="`scholarstream library search` lists each record's identifier.",
        )
    if references and text:
        raise InvalidInputError(
            f"Name the records to {what} either by identifier or by --query, not both.",
            hint="Run the command once for each.",
        )


# -- collections -------------------------------------------------------------------------------

collection_app = typer.Typer(
    help="Collections: named sets of your records (a record may be in many).",
    no_args_is_help=True,
)


def list_collections(ctx: typer.Context, user: UserOption = "local") -> None:
    """List your collections with how many records each holds."""

    async def work(runtime: "Runtime") -> "list[CollectionInfo]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.labels.collections(owner)

    found = run_with_runtime(ctx, work)
    if not found:
        console.print(
            "You have no collection yet. Make one with "
            "`scholarstream library collection add NAME --query WORDS` (or identifiers)."
        )
        return
    table = Table(title=f"{records(len(found), 'collection')}", title_justify="left")
    table.add_column("collection", overflow="fold", ratio=1)
    table.add_column("records", justify="right")
    table.add_column("changed", no_wrap=True)
    for info in found:
        table.add_row(escape(info.name), f"{info.records:,}", info.updated_at.strftime("%Y-%m-%d"))
    console.print(table)
    console.print(
        "Search one with `scholarstream library search --collection NAME`; export one with "
        "`scholarstream export --collection NAME --format ris`."
    )


@collection_app.command("add")
def collection_add(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help="The collection (made if you have none of that name).")
    ],
    references: Annotated[
        list[str] | None,
        typer.Argument(
            help="Identifiers of the records (DOI, PMID:…), as `library search` lists.",
            metavar="[IDENTIFIER]...",
        ),
    ] = None,
    text: QueryOption = "",
    year_from: YearFrom = None,
    year_to: YearTo = None,
    publication_type: TypeOption = None,
    collection: CollectionOption = None,
    tag: TagOption = None,
    has_note: NoteOption = None,
    related: RelatedTaking = False,
    user: UserOption = "local",
) -> None:
    """Put records in a collection: the ones named, or every record a search lists (with
    --query, those that have the words). The collection is made if it is new."""
    from scholarstream.errors import NotFoundError
    from scholarstream.sources.library import NothingMatchedError

    named = references or []
    searched = (
        bool(text or year_from or year_to or publication_type or collection or tag)
        or has_note is not None
    )
    _search_or_records("x" if searched else "", named, what="add")

    async def work(runtime: "Runtime") -> "tuple[CollectionChange, bool]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        ids = await _named_records(runtime, owner, named) if named else None
        query = None
        if ids is None:
            query = await library_query(
                runtime,
                owner,
                text=text,
                year_from=year_from,
                year_to=year_to,
                publication_type=publication_type,
                collection=collection,
                tag=tag,
                has_note=has_note,
                related=related,
            )
        labels = runtime.library.labels
        try:
            try:
                found = await labels.find_collection(owner, name)
            except NotFoundError:
                return await labels.create_collection(owner, name, ids=ids, query=query), True
            return await labels.add_to_collection(owner, found.id, ids=ids, query=query), False
        except NothingMatchedError as exc:
            raise exc.told(advice()) from None

    change, made = run_with_runtime(ctx, work)
    info = change.collection
    verb = "Made the collection" if made else "Collection"
    was = "was" if change.already == 1 else "were"
    already = f" ({change.already:,} {was} in it already)" if change.already else ""
    console.print(
        f"{verb} “{escape(info.name)}”: added {records(change.added)}{already}; it holds "
        f"{records(info.records)}."
    )


@collection_app.command("remove")
def collection_remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The collection.")],
    references: Annotated[
        list[str], typer.Argument(help="Identifiers of the records.", metavar="IDENTIFIER...")
    ],
    user: UserOption = "local",
) -> None:
    """Take records out of a collection (they stay in your library)."""

    async def work(runtime: "Runtime") -> "CollectionChange":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        found = await runtime.library.labels.find_collection(owner, name)
        ids = await _named_records(runtime, owner, references)
        return await runtime.library.labels.remove_from_collection(owner, found.id, ids)

    change = run_with_runtime(ctx, work)
    console.print(
        f"Took {records(change.removed)} out of “{escape(change.collection.name)}”; it holds "
        f"{records(change.collection.records)}. The records stay in your library."
    )


@collection_app.command("rename")
def collection_rename(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The collection.")],
    new_name: Annotated[str, typer.Argument(help="Its new name.", metavar="NEW_NAME")],
    user: UserOption = "local",
) -> None:
    """Rename a collection."""

    async def work(runtime: "Runtime") -> "CollectionInfo":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        found = await runtime.library.labels.find_collection(owner, name)
        return await runtime.library.labels.rename_collection(owner, found.id, new_name)

    info = run_with_runtime(ctx, work)
    console.print(f"Renamed to “{escape(info.name)}” ({records(info.records)}).")


@collection_app.command("delete")
def collection_delete(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The collection.")],
    user: UserOption = "local",
) -> None:
    """Delete a collection. Its records stay in your library."""

    async def work(runtime: "Runtime") -> "CollectionInfo":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        found = await runtime.library.labels.find_collection(owner, name)
        return await runtime.library.labels.delete_collection(owner, found.id)

    info = run_with_runtime(ctx, work)
    console.print(
        f"Deleted the collection “{escape(info.name)}”; its {records(info.records)} stay in "
        "your library."
    )


# -- tags and notes ----------------------------------------------------------------------------

tag_app = typer.Typer(help="Tags on your records (several at once).", no_args_is_help=True)


def _tag(
    ctx: typer.Context,
    tags: str,
    references: list[str],
    *,
    remove: bool,
    text: str,
    year_from: int | None,
    year_to: int | None,
    publication_type: str | None,
    collection: str | None,
    tag: str | None,
    has_note: bool | None,
    related: bool,
    user: str,
) -> None:
    from scholarstream.sources.library import NothingMatchedError

    searched = (
        bool(text or year_from or year_to or publication_type or collection or tag)
        or has_note is not None
    )
    _search_or_records("x" if searched else "", references, what="tag")

    async def work(runtime: "Runtime") -> "TagChange":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        ids = await _named_records(runtime, owner, references) if references else None
        query = None
        if ids is None:
            query = await library_query(
                runtime,
                owner,
                text=text,
                year_from=year_from,
                year_to=year_to,
                publication_type=publication_type,
                collection=collection,
                tag=tag,
                has_note=has_note,
                related=related,
            )
        change = {"remove": [tags]} if remove else {"add": [tags]}
        try:
            return await runtime.library.labels.tag(owner, ids=ids, query=query, **change)
        except NothingMatchedError as exc:
            raise exc.told(advice()) from None

    result = run_with_runtime(ctx, work)
    if remove:
        console.print(f"Removed {records(result.removed, 'tag')} from {records(result.records)}.")
    else:
        console.print(f"Tagged {records(result.records)} ({records(result.added, 'tag')} added).")


TagsArgument = Annotated[
    str, typer.Argument(help='The tags, separated by commas: "include, RCT".', metavar="TAGS")
]
References = Annotated[
    list[str] | None,
    typer.Argument(help="Identifiers of the records (DOI, PMID:…).", metavar="[IDENTIFIER]..."),
]


@tag_app.command("add")
def tag_add(
    ctx: typer.Context,
    tags: TagsArgument,
    references: References = None,
    text: QueryOption = "",
    year_from: YearFrom = None,
    year_to: YearTo = None,
    publication_type: TypeOption = None,
    collection: CollectionOption = None,
    tag: TagOption = None,
    has_note: NoteOption = None,
    related: RelatedTaking = False,
    user: UserOption = "local",
) -> None:
    """Tag records: the ones named, or every record a search lists."""
    _tag(
        ctx,
        tags,
        references or [],
        remove=False,
        text=text,
        year_from=year_from,
        year_to=year_to,
        publication_type=publication_type,
        collection=collection,
        tag=tag,
        has_note=has_note,
        related=related,
        user=user,
    )


@tag_app.command("remove")
def tag_remove(
    ctx: typer.Context,
    tags: TagsArgument,
    references: References = None,
    text: QueryOption = "",
    year_from: YearFrom = None,
    year_to: YearTo = None,
    publication_type: TypeOption = None,
    collection: CollectionOption = None,
    tag: TagOption = None,
    has_note: NoteOption = None,
    related: RelatedTaking = False,
    user: UserOption = "local",
) -> None:
    """Take tags off records: the ones named, or every record a search lists."""
    _tag(
        ctx,
        tags,
        references or [],
        remove=True,
        text=text,
        year_from=year_from,
        year_to=year_to,
        publication_type=publication_type,
        collection=collection,
        tag=tag,
        has_note=has_note,
        related=related,
        user=user,
    )


def list_tags(ctx: typer.Context, user: UserOption = "local") -> None:
    """List your tags, most used first."""

    async def work(runtime: "Runtime") -> "list[FacetCount]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.labels.tags(owner)

    found = run_with_runtime(ctx, work)
    if not found:
        console.print("You have no tag yet. Tag records with `scholarstream library tag add`.")
        return
    for tag in found:
        console.print(f"{escape(tag.value)} ({records(tag.count)})", highlight=False)


def note(
    ctx: typer.Context,
    reference: Annotated[
        str, typer.Argument(help="The record's identifier (DOI, PMID:…).", metavar="IDENTIFIER")
    ],
    text: Annotated[
        str | None, typer.Argument(help="The note (plain text); without it, print the note.")
    ] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Delete the note.")] = False,
    user: UserOption = "local",
) -> None:
    """Print a record's note, or write it (replacing the one it had)."""

    async def work(runtime: "Runtime") -> "LibraryItem":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        item = await runtime.library.find(owner, reference)
        if clear or text is not None:
            return await runtime.library.labels.set_note(
                owner, item.id, "" if clear else text or ""
            )
        return item

    item = run_with_runtime(ctx, work)
    title = escape(item.record.title)
    if clear:
        console.print(f"Deleted the note of “{title}”.")
    elif text is not None:
        console.print(f"Saved the note of “{title}”." if item.note else f"“{title}” has no note.")
    elif item.note:
        console.print(f"“{title}”:\n{escape(item.note)}", highlight=False)
    else:
        console.print(f"“{title}” has no note. Write one: `scholarstream library note ID TEXT`.")


def add_label_commands(library_app: typer.Typer) -> None:
    library_app.command("collections")(list_collections)
    library_app.add_typer(collection_app, name="collection")
    library_app.command("tags")(list_tags)
    library_app.add_typer(tag_app, name="tag")
    library_app.command("note")(note)
