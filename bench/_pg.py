"""A throwaway PostgreSQL database for a benchmark: created on the server of a URL, dropped
afterwards with whatever still holds it (the benches run as plain scripts and import
nothing from tests/, which has its own)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator


def sync_url(url: str) -> str:
    return url.replace("+asyncpg", "+psycopg", 1)


@contextlib.contextmanager
def throwaway_postgres_database(server_url: str, prefix: str = "ss_bench") -> Iterator[str]:
    """A new database on the server of ``server_url``, dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(sync_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()
