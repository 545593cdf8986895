"""The text of a record that scoring reads: what a screener reads on the record's page."""

from __future__ import annotations

from scholarstream.papers import Paper, Record, Trial


def record_text(record: Record) -> str:
    """Title, abstract, keywords and MeSH terms of a paper; title, official title, summary,
    conditions, interventions, keywords and MeSH terms of a trial."""
    if isinstance(record, Paper):
        parts = [record.title, record.abstract or "", *record.keywords, *record.mesh_terms]
    else:
        parts = [
            record.title,
            record.official_title or "",
            record.summary or "",
            *record.conditions,
            *(intervention.name for intervention in record.interventions),
            *record.keywords,
            *record.mesh_terms,
        ]
    return "\n".join(part for part in parts if part)


def mention_phrase(record: Record, *, negated: bool = False) -> str:
    """The start of a reason: what was read, with its verb ("Title and abstract mention",
    "The title does not mention")."""
    if isinstance(record, Trial):
        subject, plural = "The trial record", False
    elif record.abstract:
        subject, plural = "Title and abstract", True
    else:
        subject, plural = "The title", False
    if negated:
        return f"{subject} {'do' if plural else 'does'} not mention"
    return f"{subject} {'mention' if plural else 'mentions'}"
