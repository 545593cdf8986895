"""Users' notification targets in the database, always through the owner's scope: another
user's target (or stream) is simply not found. URLs are stored encrypted with the server
secret, like users' provider keys, and leave this module only inside a ``Target`` (for
sending), never in a ``TargetInfo`` (for showing)."""

from __future__ import annotations

import asyncio
import builtins
import uuid
from collections.abc import Sequence

from sqlalchemy import Select, func, select

from scholarstream.db import Database, OwnerScope
from scholarstream.db.tables import NotificationTargetRow, StreamRow
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.notify._message import NotificationKind
from scholarstream.notify._target import Target, TargetInfo
from scholarstream.notify._target_hosts import TargetHosts
from scholarstream.secret_box import SecretBox, load_server_secret
from scholarstream.settings import Settings

TARGET = "Notification target"
STREAM = "Stream"
MAX_LABEL = 120
# Per user, and per stream: enough for every channel a person reads.
MAX_TARGETS = 20


def to_info(row: NotificationTargetRow) -> TargetInfo:
    return TargetInfo.model_validate(
        {
            "id": row.id,
            "label": row.label,
            "preview": row.preview,
            "stream_id": row.stream_id,
            "kinds": row.kinds or None,
            "created_at": row.created_at,
        }
    )


class NotificationTargetStore:
    def __init__(
        self, database: Database, secret_box: SecretBox, *, hosts: TargetHosts | None = None
    ) -> None:
        self.database = database
        self._box = secret_box
        self._hosts = hosts if hosts is not None else TargetHosts(allow_private=True)

    @classmethod
    def for_server(cls, settings: Settings, database: Database) -> NotificationTargetStore:
        """A store encrypting with the server secret (the one provider keys use), holding
        targets to the server's host rule."""
        return cls(
            database,
            SecretBox(load_server_secret(settings)),
            hosts=TargetHosts.for_server(settings),
        )

    async def add(
        self,
        owner_id: uuid.UUID,
        url: str,
        *,
        label: str | None = None,
        stream_id: uuid.UUID | None = None,
        kinds: Sequence[NotificationKind] | None = None,
    ) -> TargetInfo:
        """Saves ``url`` for the user (``stream_id`` None) or for one of their streams.
        ``kinds`` None: every kind. ``InvalidInputError`` (nothing saved) for a URL apprise
        cannot send to; ``NotFoundError`` for a stream that is not the owner's."""
        label = (label or "").strip()
        if len(label) > MAX_LABEL:
            raise InvalidInputError(
                f"A label is at most {MAX_LABEL} characters.", hint="Shorten the label."
            )
        if kinds is not None and not kinds:
            raise InvalidInputError(
                "A target must receive at least one kind of notification.",
                hint="Leave kinds out to receive every kind, or delete the target.",
            )
        target = Target.from_url(url, label=label or None)
        await asyncio.to_thread(self._hosts.check, target.url.get_secret_value())
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            if stream_id is not None:
                await scope.get(StreamRow, stream_id, what=STREAM)
            await self._check_room(scope, stream_id)
            row = scope.add(
                NotificationTargetRow(
                    stream_id=stream_id,
                    label=target.label,
                    url_encrypted=self._box.encrypt(target.url.get_secret_value()),
                    preview=target.preview,
                    kinds=sorted(set(kinds)) if kinds else [],
                )
            )
            await session.flush()
            return to_info(row)

    async def list(
        self, owner_id: uuid.UUID, *, stream_id: uuid.UUID | None = None
    ) -> builtins.list[TargetInfo]:
        """The user's own targets (``stream_id`` None), or those of one of their streams."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            if stream_id is not None:
                await scope.get(StreamRow, stream_id, what=STREAM)
            rows = await session.scalars(
                _at_level(scope, stream_id).order_by(
                    NotificationTargetRow.created_at, NotificationTargetRow.id
                )
            )
            return [to_info(row) for row in rows]

    async def target(
        self, owner_id: uuid.UUID, target_id: uuid.UUID, *, stream_id: uuid.UUID | None = None
    ) -> Target:
        """One target, decrypted, ready to send to (the test endpoint)."""
        async with self.database.session() as session:
            return self._decrypted(await _get(OwnerScope(session, owner_id), target_id, stream_id))

    async def delete(
        self, owner_id: uuid.UUID, target_id: uuid.UUID, *, stream_id: uuid.UUID | None = None
    ) -> None:
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            await scope.delete(await _get(scope, target_id, stream_id))

    async def urls_for(
        self,
        owner_id: uuid.UUID,
        stream_id: uuid.UUID | None = None,
        *,
        kind: NotificationKind | None = None,
    ) -> builtins.list[Target]:
        """Where a notification for the owner goes: the stream's targets (if ``stream_id``
        is given), then the user's own, decrypted, each URL once, only the targets that
        receive ``kind`` (every target when None). ``NotFoundError`` for a stream that is
        not the owner's."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            query = scope.select(NotificationTargetRow)
            if stream_id is None:
                query = query.where(NotificationTargetRow.stream_id.is_(None))
            else:
                await scope.get(StreamRow, stream_id, what=STREAM)
                query = query.where(
                    (NotificationTargetRow.stream_id == stream_id)
                    | NotificationTargetRow.stream_id.is_(None)
                )
            rows = (await session.scalars(query)).all()
        # The stream's own first; a URL saved at both levels is sent once.
        ordered = sorted(rows, key=lambda r: (r.stream_id is None, r.created_at, r.id))
        targets: dict[str, Target] = {}
        for row in ordered:
            if kind is not None and row.kinds and kind not in row.kinds:
                continue
            target = self._decrypted(row)
            targets.setdefault(target.url.get_secret_value(), target)
        return builtins.list(targets.values())

    async def _check_room(self, scope: OwnerScope, stream_id: uuid.UUID | None) -> None:
        count = await scope.session.scalar(
            select(func.count()).select_from(_at_level(scope, stream_id).subquery())
        )
        if (count or 0) >= MAX_TARGETS:
            where = "this stream" if stream_id else "your account"
            raise InvalidInputError(
                f"{where.capitalize()} already has {MAX_TARGETS} notification targets.",
                hint="Delete one you no longer use first.",
            )

    def _decrypted(self, row: NotificationTargetRow) -> Target:
        return Target.model_validate(
            {
                "id": row.id,
                "label": row.label,
                "url": self._box.decrypt(row.url_encrypted),
                "preview": row.preview,
            }
        )


def _at_level(scope: OwnerScope, stream_id: uuid.UUID | None) -> Select[NotificationTargetRow]:
    query = scope.select(NotificationTargetRow)
    if stream_id is None:
        return query.where(NotificationTargetRow.stream_id.is_(None))
    return query.where(NotificationTargetRow.stream_id == stream_id)


async def _get(
    scope: OwnerScope, target_id: uuid.UUID, stream_id: uuid.UUID | None
) -> NotificationTargetRow:
    """The target at that level: a stream's target is not found under the user's own
    targets, nor under another stream."""
    if stream_id is not None:
        await scope.get(StreamRow, stream_id, what=STREAM)
    row = await scope.get(NotificationTargetRow, target_id, what=TARGET)
    if row.stream_id != stream_id:
        raise NotFoundError(
            f"That {TARGET.lower()} was not found: it was deleted, or it belongs elsewhere.",
            hint="List the notification targets of the account or stream to find its id.",
        )
    return row
