"""Lists printed as tables that fit the terminal (80 columns and up): ids cut to their first
8 hex digits, which every command takes back as a unique prefix (``resolve_id``), and one
title column that takes the room left and ends in an ellipsis, instead of long ids taking
half the width and titles wrapping one word per line.

    table = list_table("3 streams", ["id", "name", "type"], title_column="name")
    table.add_row(short_id(stream.id), stream.name, stream.type)

Rich is imported when a table is made, never by ``--help``."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from scholarstream.errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from rich.table import Table

SHORT_ID = 8
"""Hex digits of an id shown in a list: enough to tell a user's records apart."""


def short_id(value: uuid.UUID | str) -> str:
    """The first 8 hex digits of an id: ``3f2a9c1e``."""
    return str(value).replace("-", "")[:SHORT_ID]


def list_table(
    title: str | None,
    columns: Sequence[str],
    *,
    id_column: str | None = "id",
    title_column: str | None = None,
) -> Table:
    """A table of ``columns`` for a list: the ``id_column`` (short ids) never wraps, the
    ``title_column`` takes the width the others leave and cuts its text with an ellipsis,
    every other column keeps its values on one line."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        title_justify="left",
        expand=True,  # the title column takes what the others leave, no more
    )
    for name in columns:
        if name == title_column:
            table.add_column(name, no_wrap=True, overflow="ellipsis", ratio=1, min_width=12)
        elif name == id_column:
            table.add_column(name, no_wrap=True, min_width=SHORT_ID)
        else:
            table.add_column(name, no_wrap=True, overflow="ellipsis")
    return table


def _hex(text: str) -> str:
    return text.strip().lower().replace("-", "")


def resolve_id(text: str, ids: Iterable[uuid.UUID], *, what: str, listed_by: str) -> uuid.UUID:
    """The id among ``ids`` that ``text`` names: the whole id, or a prefix of it that no
    other id shares (``3f2a9c1e``, as lists show them). ``what`` names the thing ("research",
    "stream"), ``listed_by`` the command that lists them ("scholarstream research list")."""
    wanted = _hex(text)
    if len(wanted) < 4 or any(c not in "0123456789abcdef" for c in wanted):
        raise InvalidInputError(
            f"{text!r} is not an id.",
            hint=f"Give an id as '{listed_by}' shows it (its first {SHORT_ID} characters are "
            "enough).",
        )
    matches = [value for value in dict.fromkeys(ids) if value.hex.startswith(wanted)]
    if not matches:
        raise NotFoundError(
            f"No {what} has an id starting {text.strip()}.",
            hint=f"'{listed_by}' lists them with their ids.",
        )
    if len(matches) > 1:
        starts = ", ".join(sorted(short_id(m) + "…" for m in matches))
        raise InvalidInputError(
            f"{len(matches)} {what} ids start {text.strip()} ({starts}).",
            hint="Give more characters of the id.",
        )
    return matches[0]


async def find_id(
    text: str,
    listed: Callable[[], Awaitable[Iterable[uuid.UUID]]],
    *,
    what: str,
    listed_by: str,
) -> uuid.UUID:
    """The id ``text`` names: a whole id as it is (the command's own lookup then says
    whether it is one of the user's), else the one id among those ``listed`` returns that
    starts with it (``resolve_id``: a clear error for no id, none or several)."""
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return resolve_id(text, await listed(), what=what, listed_by=listed_by)
