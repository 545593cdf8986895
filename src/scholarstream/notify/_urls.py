"""Apprise notification URLs: checking one, and the parts of it that are secret.

A URL such as ``mailto://user:pass@example.com`` or ``slack://T000/B000/XXXX`` carries its
credentials inline, so only ``preview`` (scheme and host kept, secrets masked) is ever
shown or logged, and ``redact`` cleans messages that might repeat a secret."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

from apprise import Apprise

from scholarstream.errors import InvalidInputError

MASK = "***"
MAX_URL_LENGTH = 2000
MAX_PREVIEW = 200
_MIN_SECRET = 4

URL_HINT = (
    "Use an apprise URL, e.g. ntfy://topic, mailto://user:pass@example.com, "
    "slack://TokenA/TokenB/TokenC or json://host/path for a webhook; "
    "https://github.com/caronc/apprise/wiki lists every service."
)


@dataclass(frozen=True)
class CheckedUrl:
    """A URL apprise can send to, the service it names, and its safe preview."""

    url: str = field(repr=False)
    service: str
    preview: str


def check_url(url: str) -> CheckedUrl:
    """``url`` (without surrounding blanks) checked with apprise; ``InvalidInputError``
    naming example URLs when apprise cannot send to it."""
    url = url.strip()
    if not url or len(url) > MAX_URL_LENGTH or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise InvalidInputError(
            f"A notification URL is one line of at most {MAX_URL_LENGTH} characters.",
            hint=URL_HINT,
        )
    # instantiate() is what Apprise.add() runs: None for an unknown scheme, a URL the
    # service cannot use, or a service disabled on this system.
    plugin = Apprise.instantiate(url)
    if plugin is None:
        scheme = url.partition("://")[0] if "://" in url else ""
        named = f" ({scheme}://)" if scheme.isalnum() and len(scheme) <= 20 else ""
        raise InvalidInputError(
            f"That is not a notification URL apprise can send to{named}.", hint=URL_HINT
        )
    return CheckedUrl(url=url, service=str(plugin.service_name), preview=preview(url))


def preview(url: str) -> str:
    """``url`` safe to show: scheme and host kept; user, password, query values and
    anything that looks like a token (in the host, port or path) replaced by ``***``."""
    shown = _split(url).preview
    return shown if len(shown) <= MAX_PREVIEW else shown[: MAX_PREVIEW - 1] + "…"


def redact(text: str, url: str) -> str:
    """``text`` (an error message about ``url``) with every secret part of ``url`` masked."""
    for secret in sorted(_split(url).secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def looks_secret(part: str) -> bool:
    """A token, key or id rather than a word: long, or letters mixed with digits."""
    has_digit = any(ch.isdigit() for ch in part)
    has_alpha = any(ch.isalpha() for ch in part)
    return len(part) >= 16 or (len(part) >= 6 and has_digit and has_alpha)


@dataclass
class _Split:
    preview: str
    secrets: set[str] = field(default_factory=set)


def _split(url: str) -> _Split:
    """Parsed by hand: apprise URLs are not always valid for ``urllib`` (a bot token
    where the port goes, a topic where the host goes)."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep or not scheme.isascii() or not scheme.replace("+", "").isalnum():
        return _Split(MASK, {url.strip()} if url.strip() else set())
    split = _Split("")
    rest = rest.split("#", 1)[0]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hostport = netloc.rpartition("@")
    if at:
        split.secrets.update(p for p in userinfo.split(":") if p)
    host, port = _host_port(hostport)
    shown_host = _mask_part(host, split, keep=_is_hostname(host))
    shown = f"{scheme}://{MASK + '@' if at else ''}{shown_host}"
    if port:
        # Not a number: a service keeps a key there (tgram://bot_id:token/chat).
        shown += ":" + (port if port.isdigit() else _mask_part(port, split, force=True))
    if path:
        shown += "/" + "/".join(_mask_part(seg, split) for seg in path.split("/"))
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        split.secrets.update(value for _, value in pairs)
        split.secrets.update(raw.partition("=")[2] for raw in query.split("&"))
        # A bare token may stand where a key goes ("?0123abcd..."): keys are checked too.
        shown += "?" + "&".join(f"{_mask_part(key, split)}={MASK}" for key, _ in pairs)
    split.secrets |= {unquote(s) for s in split.secrets}
    # Shorter ones would mask ordinary words of the message, and reveal little anyway.
    split.secrets = {s for s in split.secrets if len(s) >= _MIN_SECRET}
    split.preview = shown
    return split


def _host_port(hostport: str) -> tuple[str, str]:
    if hostport.startswith("["):  # IPv6 literal
        host, _, rest = hostport.partition("]")
        return host + "]", rest.removeprefix(":")
    host, _, port = hostport.partition(":")
    return host, port


def _is_hostname(host: str) -> bool:
    return "." in host or host.startswith("[") or host == "localhost"


def _mask_part(part: str, split: _Split, *, keep: bool = False, force: bool = False) -> str:
    if not force and (keep or not looks_secret(unquote(part))):
        return part
    split.secrets.add(part)
    return MASK
