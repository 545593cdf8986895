"""Logging, configured once by the CLI: plain or JSON lines, the request id on every
record made while serving a request, and known secrets replaced by '***'."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # the settings (pydantic-settings) are not needed to redact or log
    from scholarstream.settings import LoggingSettings

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)

# Shapes of secrets that may arrive from outside the settings (a header, a user's key).
_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\b(sk-[A-Za-z0-9_-]{6})[A-Za-z0-9_-]{6,}"),
    re.compile(r"\b((?:ss|sess)_)[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?i)((?:api[_-]?key|password|token|secret)[\"']?\s*[=:]\s*[\"']?)[^\s\"'&,]{4,}"),
)


# Secrets learnt while running (users' provider keys as they are decrypted for a call),
# redacted whatever their shape. Bounded: a key dropped from here is still caught by its
# shape if it has a known one.
_LEARNT_SECRETS: dict[str, None] = {}
_MAX_LEARNT_SECRETS = 10_000


def remember_secret(value: str) -> None:
    """Keeps ``value`` out of every log line from now on."""
    if len(value) < 8 or value in _LEARNT_SECRETS:
        return
    _LEARNT_SECRETS[value] = None
    if len(_LEARNT_SECRETS) > _MAX_LEARNT_SECRETS:
        del _LEARNT_SECRETS[next(iter(_LEARNT_SECRETS))]


class _ContextFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = set(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get() or "-"
        secrets = sorted(self._secrets.union(_LEARNT_SECRETS), key=len, reverse=True)
        record.msg, record.args = redact(record.getMessage(), secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, secrets)
        return True


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + "***", text)
    return text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_text:
            payload["exception"] = record.exc_text
        return json.dumps(payload, ensure_ascii=False)


PLAIN_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s"


class _CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to ``sys.stderr`` as it is when each record is written, not as it was when
    logging was configured: a replaced stderr (a test runner's capture, a redirect) must
    never leave the handler holding a closed stream."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        """StreamHandler assigns its stream on creation; the current stderr is used instead."""


# Other libraries' loggers: quiet (warnings and errors only) unless DEBUG is asked for.
THIRD_PARTY_LOGGERS = (
    "aiosqlite", "alembic", "anthropic", "apprise", "asyncio", "bm25s", "dbos", "filelock",
    "fsspec", "google_genai", "hpack", "httpcore", "httpx", "markdown_it", "multipart",
    "onnxruntime", "openai", "PIL", "sqlalchemy", "tokenizers", "urllib3", "uvicorn.access",
)  # fmt: skip

SERVER_COMMANDS = frozenset({"serve", "worker"})
"""Commands that run a server: they log at the configured level (INFO by default)."""


def command_log_level(settings: LoggingSettings, *, verbose: int = 0, command: str | None) -> str:
    """The level a command line logs at. An interactive command logs only warnings and
    errors, so that no progress line of a library or of ours lands in its screens, unless
    ``--verbose`` asks for more (INFO; twice: DEBUG) or a level was set (``--log-level``,
    ``SCHOLARSTREAM_LOGGING__LEVEL`` or the settings file). A server logs at the
    configured level."""
    if verbose:
        return "DEBUG" if verbose > 1 else "INFO"
    if command in SERVER_COMMANDS or "level" in settings.model_fields_set:
        return settings.level
    return "WARNING"


def configure_logging(
    settings: LoggingSettings, *, secrets: Iterable[str] = (), level: str | None = None
) -> None:
    """``level``: instead of the settings' level (``command_log_level``)."""
    level = level or settings.level
    handler = _CurrentStderrHandler()
    handler.addFilter(_ContextFilter(secrets))
    handler.setFormatter(
        JsonFormatter() if settings.format == "json" else logging.Formatter(PLAIN_FORMAT)
    )
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    # Library loggers that would otherwise bypass our handler or flood it.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "dbos"):
        lib = logging.getLogger(name)
        lib.handlers.clear()
        lib.propagate = True
    quiet = logging.NOTSET if level == "DEBUG" else logging.WARNING
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
