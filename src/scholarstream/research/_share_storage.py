"""Where shareable reports are kept: a directory (default ``<data_dir>/shares``) or any
fsspec URL (``s3://bucket/shares``, ``gs://...``, ``memory://...`` in tests), one file
``<token>.html`` per shared research.

A token is ``secrets.token_urlsafe(32)``: 43 characters of ``[A-Za-z0-9_-]``, unguessable,
and the page's only address. Anything else given as a token is simply not found, so a
token can never name a path outside the store. fsspec's calls block (a remote store is a
network call): each runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import re
import secrets

import fsspec
from fsspec.core import url_to_fs

from scholarstream.errors import NotFoundError
from scholarstream.settings import Settings

__all__ = ["TOKEN_PATTERN", "ShareStorage", "new_token", "share_location"]

TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
_TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(_TOKEN_BYTES)


def share_location(settings: Settings) -> str:
    """``research.share_url``, else the directory ``shares`` in the data directory."""
    return settings.research.share_url or str((settings.data_dir / "shares").resolve())


def _not_found() -> NotFoundError:
    return NotFoundError(
        "This shared report does not exist.",
        hint="Check the link: it must be copied whole.",
    )


class ShareStorage:
    def __init__(self, location: str) -> None:
        self.location = location
        filesystem, root = url_to_fs(location)
        self._fs: fsspec.AbstractFileSystem = filesystem
        self._root = str(root).rstrip("/")

    @classmethod
    def for_settings(cls, settings: Settings) -> ShareStorage:
        return cls(share_location(settings))

    def _path(self, token: str) -> str:
        if not TOKEN_PATTERN.fullmatch(token):
            raise _not_found()
        return f"{self._root}/{token}.html"

    def url_of(self, token: str) -> str:
        """Where the page of ``token`` is stored (a path, or a URL with its protocol)."""
        return str(self._fs.unstrip_protocol(self._path(token)))

    async def write(self, token: str, html: str) -> str:
        """Stores (or rewrites) the page of ``token``; returns where it is stored."""
        path = self._path(token)
        await asyncio.to_thread(self._write, path, html.encode("utf-8"))
        return self.url_of(token)

    async def read(self, token: str) -> str:
        """The page of ``token``; ``NotFoundError`` for a token nothing is stored under."""
        path = self._path(token)
        try:
            data = await asyncio.to_thread(self._fs.cat_file, path)
        except FileNotFoundError as exc:
            raise _not_found() from exc
        return bytes(data).decode("utf-8")

    def _write(self, path: str, data: bytes) -> None:
        self._fs.makedirs(self._root, exist_ok=True)
        self._fs.pipe_file(path, data)
