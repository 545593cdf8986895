"""The shareable report of a completed research: one self-contained HTML page (inline CSS,
no script, no external asset) with the title, the research question, the synthesis, each
model's report (failed models with their error) and the external reports; with an evidence
pack, every answer shows its citations marked and counted, and the cited records follow
the synthesis as a reference list.

Everything a model or a user wrote is escaped, or, where it is Markdown, rendered and
sanitised (``safe_markdown``). The page carries its own Content-Security-Policy (a
``<meta>``) so that it stays inert wherever it is stored and opened; the public route sends
the same policy, and the other headers of ``SHARE_HEADERS``, with it.
"""

from __future__ import annotations

import base64
import hashlib
import html
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from scholarstream.grounding import MARK_LEGEND, CitationAudit, cited_references
from scholarstream.research.core import (
    Research,
    ResearchStatus,
    conflict,
    render_markdown,
    research_audits,
    synthesis_notice,
    utc_now,
)

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "SHARE_HEADERS",
    "render_missing_share_page",
    "render_share_page",
]

PAGE_CSS = """
:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6472;--line:#d9dee6;--bg:#fff;
--card:#f6f8fb;--ok:#1f7a3d;--bad:#a4262c;--link:#1a5fb4}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#a3abb8;--line:#343b47;
--bg:#14181f;--card:#1c222b;--ok:#6cc38a;--bad:#f08a8f;--link:#8ab4f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:52rem;margin:0 auto;padding:2rem 1.25rem 4rem}
h1{font-size:1.9rem;line-height:1.25;margin:.2rem 0 .5rem}
h2{font-size:1.3rem;margin:2.2rem 0 .8rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:0 0 .6rem}
a{color:var(--link)}
.kicker{margin:0;text-transform:uppercase;letter-spacing:.08em;font-size:.75rem;color:var(--muted)}
.meta,.source,footer{color:var(--muted);font-size:.9rem}
.question{white-space:pre-wrap;background:var(--card);border-left:4px solid var(--line);
padding:.8rem 1rem;margin:0;border-radius:4px}
.report{background:var(--card);border:1px solid var(--line);border-radius:8px;
padding:1rem 1.2rem;margin:0 0 1rem}
.model{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95rem}
.status,.attempt{font-size:.75rem;font-weight:600;text-transform:uppercase;
padding:.1rem .45rem;border-radius:999px;border:1px solid currentColor;margin-left:.4rem}
.completed .status{color:var(--ok)}
.failed .status,.error{color:var(--bad)}
.error{white-space:pre-wrap;margin:0}
.notice{color:var(--muted);font-style:italic}
.markdown pre{overflow-x:auto;background:var(--bg);border:1px solid var(--line);
padding:.7rem;border-radius:6px}
.markdown code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.markdown table{border-collapse:collapse;display:block;overflow-x:auto}
.markdown th,.markdown td{border:1px solid var(--line);padding:.3rem .6rem}
.markdown blockquote{margin:0;padding-left:1rem;border-left:3px solid var(--line);
color:var(--muted)}
.audit{font-weight:600;margin:0 0 .5rem}
footer{margin-top:3rem;border-top:1px solid var(--line);padding-top:1rem}
""".strip()

_CSS_HASH = base64.b64encode(hashlib.sha256(PAGE_CSS.encode()).digest()).decode()

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    f"style-src 'sha256-{_CSS_HASH}'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""No script, no request anywhere: only the page's own stylesheet (by its hash)."""

SHARE_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Frame-Options": "DENY",
    "Cache-Control": "private, no-cache",
}
"""The response headers of a shared page."""

_environment = Environment(
    loader=PackageLoader("scholarstream.research", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass(frozen=True)
class _ModelReport:
    model: str
    status: str
    attempt: int
    content: Markup | None
    error: str | None
    cut_off: bool
    audit: str | None


@dataclass(frozen=True)
class _ExternalReport:
    title: str
    source: str | None
    link: str | None
    content: Markup


def _web_link(source: str | None) -> str | None:
    """``source`` when it is an http(s) address worth linking, else ``None``."""
    if not source:
        return None
    parts = urlsplit(source.strip())
    return source.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def _answer(content: str, audit: CitationAudit | None) -> str:
    """The answer as shown: with its citations marked when they were audited."""
    return audit.annotated if audit else content


def _when(moment: datetime | None) -> str | None:
    return moment.strftime("%d %B %Y, %H:%M UTC") if moment else None


def render_share_page(research: Research, *, now: datetime | None = None) -> str:
    """The HTML page of a completed research; ``ConflictError`` for any other status."""
    if research.status != ResearchStatus.COMPLETED:
        raise conflict(
            research.status,
            f"Only a completed research has a shareable report; this one is {research.status}.",
        )
    reports = [
        _ModelReport(
            model=result.model,
            status=result.status.value,
            attempt=result.attempt,
            content=Markup(render_markdown(_answer(result.content, result.audit)))  # noqa: S704
            if result.content
            else None,
            error=result.error,
            cut_off=result.cut_off,
            audit=result.audit.summary() if result.audit else None,
        )
        for result in research.llm_results
    ]
    external = [
        _ExternalReport(
            title=report.title,
            source=report.source,
            link=_web_link(report.source),
            content=Markup(render_markdown(report.content)),  # noqa: S704
        )
        for report in research.external_reports
    ]
    synthesis = research.synthesized_result
    references = cited_references(research.evidence, research_audits(research))
    template = _environment.get_template("share_page.html")
    return template.render(
        research=research,
        css=Markup(PAGE_CSS),  # noqa: S704 -- our own constant
        csp=CONTENT_SECURITY_POLICY,
        completed=_when(research.completed_at),
        generated=_when(utc_now(now)),
        answered=len(research.successful_results),
        synthesis=Markup(render_markdown(_answer(synthesis, research.synthesis_audit)))  # noqa: S704
        if synthesis
        else None,
        synthesis_audit=research.synthesis_audit.summary() if research.synthesis_audit else None,
        references=Markup(render_markdown(references)) if references else None,  # noqa: S704
        legend=MARK_LEGEND if research.evidence and research.evidence.items else None,
        notice=synthesis_notice(research),
        reports=reports,
        external=external,
    )


def render_missing_share_page(message: str, hint: str | None) -> str:
    """The page a browser gets for a shared link that leads nowhere (a link cut short, a
    report the server no longer has): the same inert page as a report, saying so in words,
    never an error body."""
    said = f"<p>{html.escape(hint)}</p>" if hint else ""
    policy = html.escape(CONTENT_SECURITY_POLICY)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        "<title>Shared report not found · ScholarStream</title>"
        f"<style>{PAGE_CSS}</style></head><body><main>"
        '<p class="kicker">ScholarStream · shared research report</p>'
        f"<h1>{html.escape(message)}</h1>{said}"
        '<p class="meta">If the link is whole, ask whoever sent it for a new one.</p>'
        "</main></body></html>"
    )
