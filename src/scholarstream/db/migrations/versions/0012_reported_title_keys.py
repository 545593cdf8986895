"""stream monitoring: reported title keys name the identifier kinds of their item

A stream's reported title key (``title:<hash>``, the title and year) used to match any
later record with that title, so one "Correction" reported hid every later correction.
Since 0012 an item that carries a DOI, PMID, PMCID or arXiv id stores its title key as
``title:<hash>|doi+pmid`` (the kinds it carries), and a later record matches it by title
only when it carries none of those kinds (``streams.monitoring.keys``). This migration
rewrites the bare title keys that items with identifiers stored before: each report's
items say which of its title keys belong to such an item. A title key some item without
identifiers stored too stays as it is.

The key is computed here as ``search.keys.paper_key`` computed it when the keys were
stored (a frozen copy: a migration never changes with the code).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-10 09:00:00.000000
"""

import hashlib
import re
import uuid
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KINDS = ("doi", "pmid", "pmcid", "arxiv_id")
_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)

_items = sa.table(
    "stream_reported_items",
    sa.column("id", sa.Uuid()),
    sa.column("owner_id", sa.Uuid()),
    sa.column("stream_id", sa.Uuid()),
    sa.column("key", sa.String(300)),
    sa.column("report_id", sa.Uuid()),
)
_reports = sa.table("stream_reports", sa.column("id", sa.Uuid()), sa.column("report", sa.JSON()))


def _title_key(record: dict[str, Any]) -> str:
    title = str(record.get("title") or "")
    year = record.get("year")
    if year is None and isinstance(record.get("start_date"), str):
        year = record["start_date"][:4]  # a trial's year is its start date's
    normal = _SPACE.sub(" ", _NON_WORD.sub(" ", title.lower())).strip()
    basis = f"{normal}|{year or ''}"
    return "title:" + hashlib.sha256(basis.encode()).hexdigest()[:16]


def _kinds(record: dict[str, Any]) -> tuple[str, ...]:
    ids = record.get("ids")
    if not isinstance(ids, dict):
        return ()
    return tuple(kind for kind in _KINDS if ids.get(kind))


def _report_titles(report: Any) -> tuple[dict[str, set[tuple[str, ...]]], set[str]]:
    """Title key -> the identifier kinds of the report's items with that title; and the
    title keys of its items without any."""
    with_ids: dict[str, set[tuple[str, ...]]] = {}
    without: set[str] = set()
    items = report.get("items") if isinstance(report, dict) else None
    for item in items if isinstance(items, list) else []:
        record = item.get("record") if isinstance(item, dict) else None
        if not isinstance(record, dict):
            continue
        key, kinds = _title_key(record), _kinds(record)
        if kinds:
            with_ids.setdefault(key, set()).add(kinds)
        else:
            without.add(key)
    return with_ids, without


def upgrade() -> None:
    conn = op.get_bind()
    bare = conn.execute(
        sa.select(
            _items.c.id, _items.c.owner_id, _items.c.stream_id, _items.c.key, _items.c.report_id
        ).where(_items.c.key.like("title:%"), ~_items.c.key.contains("|"))
    ).all()
    reports: dict[uuid.UUID, tuple[dict[str, set[tuple[str, ...]]], set[str]]] = {}
    for row_id, owner_id, stream_id, key, report_id in bare:
        if report_id not in reports:
            report = conn.execute(
                sa.select(_reports.c.report).where(_reports.c.id == report_id)
            ).scalar()
            reports[report_id] = _report_titles(report)
        with_ids, without = reports[report_id]
        if key in without or key not in with_ids:
            continue
        for kinds in sorted(with_ids[key]):
            named = f"{key}|{'+'.join(kinds)}"
            exists = conn.execute(
                sa.select(_items.c.id).where(_items.c.stream_id == stream_id, _items.c.key == named)
            ).first()
            if exists is None:
                conn.execute(
                    _items.insert().values(
                        id=uuid.uuid4(),
                        owner_id=owner_id,
                        stream_id=stream_id,
                        key=named,
                        report_id=report_id,
                    )
                )
        conn.execute(_items.delete().where(_items.c.id == row_id))


def downgrade() -> None:
    """Back to bare title keys (one per stream and title)."""
    conn = op.get_bind()
    named = conn.execute(
        sa.select(
            _items.c.id, _items.c.owner_id, _items.c.stream_id, _items.c.key, _items.c.report_id
        ).where(_items.c.key.like("title:%|%"))
    ).all()
    for row_id, owner_id, stream_id, key, report_id in named:
        bare = key.split("|", 1)[0]
        exists = conn.execute(
            sa.select(_items.c.id).where(_items.c.stream_id == stream_id, _items.c.key == bare)
        ).first()
        if exists is None:
            conn.execute(
                _items.insert().values(
                    id=uuid.uuid4(),
                    owner_id=owner_id,
                    stream_id=stream_id,
                    key=bare,
                    report_id=report_id,
                )
            )
        conn.execute(_items.delete().where(_items.c.id == row_id))
