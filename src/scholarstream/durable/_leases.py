"""Executor ids and their leases (the rules for operators: docs/deployment.md).

A process holds a *lease* on its executor id while it runs: a PostgreSQL advisory lock, or a
file lock beside the SQLite system database, which the database server or the kernel frees
when the process dies, however it dies. Ids are ``<host>-<role>-<n>`` by default (the lowest
``n`` whose lease is free), or ``<host>-<role>-run<hex>`` for a process that runs once (the
CLI), whose work nobody will come back for."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import sys
import uuid
from pathlib import Path
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from scholarstream.settings import Settings

# How many processes of one role one host may run with default ids.
MAX_SLOTS = 64
# How long a process given an explicit executor id waits for its lease (another process's
# recovery pass may hold it for a moment) before refusing to start.
LEASE_WAIT_SEC = 10.0
SLOT_RECHECK_SEC = 0.3
_PER_RUN_ID = re.compile(r"-run[0-9a-f]{10}$")


def is_per_run(executor_id: str) -> bool:
    """An id taken for one run only (the CLI's): its process never comes back."""
    return _PER_RUN_ID.search(executor_id) is not None


def slot_executor_id(role: str, slot: int) -> str:
    return f"{socket.gethostname()}-{role}-{slot}"


def per_run_executor_id(role: str) -> str:
    return f"{socket.gethostname()}-{role}-run{uuid.uuid4().hex[:10]}"


class Lease(Protocol):
    def held(self) -> bool:
        """Still held (the connection holding a database lock may have been lost)."""
        ...

    def release(self) -> None: ...


class Leases(Protocol):
    def acquire(self, executor_id: str) -> Lease | None:
        """The lease, or ``None`` when a running process holds it. Never waits."""
        ...

    def close(self) -> None: ...


def _key(app_name: str, executor_id: str) -> int:
    digest = hashlib.blake2b(f"{app_name}\0{executor_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class _AdvisoryLease:
    def __init__(self, connection: sa.Connection, key: int) -> None:
        self.connection = connection
        self.key = key

    def held(self) -> bool:
        try:
            self.connection.execute(sa.text("SELECT 1"))
        except sa.exc.SQLAlchemyError:
            return False
        return True

    def release(self) -> None:
        with contextlib.suppress(sa.exc.SQLAlchemyError):
            self.connection.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": self.key})
        with contextlib.suppress(sa.exc.SQLAlchemyError):
            self.connection.close()


_KEEPALIVES = (
    "tcp_keepalives_idle = 10",
    "tcp_keepalives_interval = 5",
    "tcp_keepalives_count = 3",
)


class AdvisoryLeases:
    """PostgreSQL session advisory locks, one connection per lease held. The server frees
    them when the connection ends: at once when the process dies, and within about half a
    minute (the session's TCP keepalives) when its host vanishes."""

    def __init__(self, url: str, app_name: str) -> None:
        self.app_name = app_name
        self.engine = sa.create_engine(
            url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT"
        )

    def acquire(self, executor_id: str) -> Lease | None:
        key = _key(self.app_name, executor_id)
        connection = self.engine.connect()
        try:
            got = connection.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key})
            if got.scalar_one():
                # A vanished host's connection is noticed in about half a minute (not the
                # server's default two hours), and the lock freed with it.
                for setting in _KEEPALIVES:
                    connection.execute(sa.text(f"SET {setting}"))
                return _AdvisoryLease(connection, key)
        except BaseException:
            connection.close()
            raise
        connection.close()
        return None

    def close(self) -> None:
        self.engine.dispose()


def _lock_file(fd: int) -> bool:
    """An exclusive lock on the open file ``fd``, without waiting; ``False`` if taken."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class _FileLease:
    def __init__(self, fd: int, path: Path | None = None) -> None:
        self.fd: int | None = fd
        self.path = path  # removed on release: the file of a per-run id, never used again

    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the file releases its lock
            self.fd = None
            if self.path is not None:
                # Whoever locks it meanwhile holds a lock on a file gone: on an id gone too.
                with contextlib.suppress(OSError):
                    self.path.unlink()


class FileLeases:
    """``flock`` on one file per executor id, in the directory of the SQLite system
    database: the kernel frees the lock when the process dies. One machine only, which is
    what SQLite is for."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, executor_id: str) -> Path:
        readable = re.sub(r"[^A-Za-z0-9._-]", "_", executor_id)[:80]
        digest = hashlib.blake2b(executor_id.encode(), digest_size=4).hexdigest()
        return self.directory / f"{readable}-{digest}.lock"

    def acquire(self, executor_id: str) -> Lease | None:
        self.directory.mkdir(exist_ok=True)  # beside the database, whose directory must exist
        path = self._path(executor_id)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            locked = _lock_file(fd)
        except BaseException:
            os.close(fd)
            raise
        if not locked:
            os.close(fd)
            return None
        return _FileLease(fd, path if is_per_run(executor_id) else None)

    def close(self) -> None:  # nothing held but the leases
        return None


def leases_for(settings: Settings, app_name: str) -> Leases:
    url = settings.system_database_url
    if url.startswith("postgresql"):
        return AdvisoryLeases(url, app_name)
    database = make_url(url).database
    directory = Path(database).parent if database else settings.data_dir
    return FileLeases(directory / "executors")
