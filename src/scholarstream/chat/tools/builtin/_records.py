"""Literature records as the chat shows them: payload models for the UI, and compact but
complete text for the model (every identifier, the venue, year, status and phase, the
abstract or summary) so it never has to guess what a record says."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scholarstream.chat._builtin_payloads import (
    LinkData,
    LiteratureArticle,
    OutcomeData,
    PaperDetail,
    PaperIds,
    TrialDetail,
)
from scholarstream.papers import Paper, Record, Trial, paper_key, record_sources

SNIPPET_CHARS = 300
AUTHORS_SHOWN = 6


def snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str | None:
    """The start of ``text``, cut at a word, with an ellipsis when cut."""
    if not text:
        return None
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def author_names(paper: Paper) -> list[str]:
    return [author.name for author in paper.authors]


def authors_line(paper: Paper) -> str | None:
    names = author_names(paper)
    if not names:
        return None
    shown = ", ".join(names[:AUTHORS_SHOWN])
    return f"{shown} et al. ({len(names)} authors)" if len(names) > AUTHORS_SHOWN else shown


def record_url(record: Record) -> str | None:
    """The page a reader would open: PubMed, the DOI, arXiv, else the source's link."""
    ids = record.ids
    if ids.pmid:
        return f"https://pubmed.ncbi.nlm.nih.gov/{ids.pmid}/"
    if ids.doi:
        return f"https://doi.org/{ids.doi}"
    if ids.arxiv_id:
        return f"https://arxiv.org/abs/{ids.arxiv_id}"
    if ids.nct_id:
        return f"https://clinicaltrials.gov/study/{ids.nct_id}"
    return record.links[0].url if record.links else None


_ID_LABELS = {
    "pmid": "PMID ",
    "doi": "DOI ",
    "pmcid": "",
    "arxiv_id": "arXiv ",
    "nct_id": "",
    "openalex_id": "OpenAlex ",
    "s2_id": "S2 ",
}


def id_line(record: Record) -> str:
    """``PMID 123 · DOI 10.1/x · PMC45``: every identifier, labelled unless it says what it
    is itself (PMC..., NCT...)."""
    return " · ".join(
        f"{_ID_LABELS.get(name, name + ' ')}{value}" for name, value in record.ids.present().items()
    )


def paper_detail(paper: Paper) -> PaperDetail:
    ids = paper.ids
    return PaperDetail(
        kind="paper",
        ids=PaperIds(
            doi=ids.doi,
            pmid=ids.pmid,
            pmcid=ids.pmcid,
            arxiv_id=ids.arxiv_id,
            openalex_id=ids.openalex_id,
            s2_id=ids.s2_id,
        ),
        title=paper.title,
        authors=author_names(paper),
        journal=paper.venue,
        year=paper.year,
        published=paper.published,
        volume=paper.volume,
        issue=paper.issue,
        pages=paper.pages,
        publisher=paper.publisher,
        abstract=paper.abstract,
        publication_types=paper.publication_types,
        mesh_terms=paper.mesh_terms,
        keywords=paper.keywords,
        citation_count=paper.citation_count,
        retraction=paper.retraction.notice if paper.retraction else None,
        url=record_url(paper),
        links=[LinkData(url=link.url, kind=link.kind) for link in paper.links],
        sources=record_sources(paper),
    )


def trial_detail(trial: Trial) -> TrialDetail:
    return TrialDetail(
        kind="trial",
        nct_id=trial.ids.nct_id or "",
        title=trial.title,
        official_title=trial.official_title,
        summary=trial.summary,
        status=trial.status,
        phases=trial.phases,
        study_type=trial.study_type,
        conditions=trial.conditions,
        interventions=[item.name for item in trial.interventions],
        sponsor=trial.sponsor,
        collaborators=trial.collaborators,
        enrollment=trial.enrollment,
        start_date=trial.start_date,
        primary_completion_date=trial.primary_completion_date,
        completion_date=trial.completion_date,
        primary_outcomes=[
            OutcomeData(measure=o.measure, time_frame=o.time_frame) for o in trial.primary_outcomes
        ],
        has_results=trial.has_results,
        url=record_url(trial),
        sources=record_sources(trial),
    )


def record_detail(record: Record) -> PaperDetail | TrialDetail:
    return paper_detail(record) if isinstance(record, Paper) else trial_detail(record)


def literature_article(
    record: Record, *, sources: list[str], library_id: str | None = None
) -> LiteratureArticle:
    """``sources``: the searched sources that returned it (a library record's provenance
    also names the file format it was imported from, which is no source)."""
    paper = record if isinstance(record, Paper) else None
    text = record.abstract if isinstance(record, Paper) else record.summary
    return LiteratureArticle(
        id=paper_key(record),
        title=record.title,
        authors=author_names(paper) if paper else [],
        journal=paper.venue if paper else None,
        year=record.year,
        doi=record.ids.doi,
        pmid=record.ids.pmid,
        arxiv_id=record.ids.arxiv_id,
        library_id=library_id,
        abstract_snippet=snippet(text),
        url=record_url(record),
        sources=sources,
    )


# --- text for the model -----------------------------------------------------------------


def _lines(*pairs: tuple[str, object]) -> list[str]:
    return [f"{label}: {value}" for label, value in pairs if value not in (None, "", [])]


def paper_text(paper: Paper) -> str:
    """Everything a reader needs from one paper, the abstract in full."""
    venue = ", ".join(
        part
        for part in (
            paper.venue,
            str(paper.year) if paper.year else None,
            f"vol {paper.volume}" if paper.volume else None,
            f"issue {paper.issue}" if paper.issue else None,
            f"pp {paper.pages}" if paper.pages else None,
        )
        if part
    )
    lines = [f"Title: {paper.title}"]
    lines += _lines(
        ("Authors", authors_line(paper)),
        ("Published in", venue),
        ("Identifiers", id_line(paper)),
        ("Publication types", "; ".join(paper.publication_types)),
        ("MeSH terms", "; ".join(paper.mesh_terms)),
        ("Keywords", "; ".join(paper.keywords)),
        ("Cited by", paper.citation_count),
        ("RETRACTED", paper.retraction.notice if paper.retraction else None),
        ("URL", record_url(paper)),
        ("Abstract", " ".join((paper.abstract or "(no abstract)").split())),
    )
    return "\n".join(lines)


def trial_text(trial: Trial) -> str:
    """Everything a reader needs from one registered trial, the summary in full."""
    dates = ", ".join(
        f"{label} {value.isoformat()}"
        for label, value in (
            ("start", trial.start_date),
            ("primary completion", trial.primary_completion_date),
            ("completion", trial.completion_date),
        )
        if value
    )
    outcomes = "; ".join(
        o.measure + (f" ({o.time_frame})" if o.time_frame else "") for o in trial.primary_outcomes
    )
    interventions = "; ".join(
        item.name + (f" [{item.type}]" if item.type else "") for item in trial.interventions
    )
    lines = [f"Title: {trial.title}"]
    lines += _lines(
        ("NCT id", trial.ids.nct_id),
        ("Official title", trial.official_title),
        ("Status", trial.status),
        ("Phases", ", ".join(trial.phases)),
        ("Study type", trial.study_type),
        ("Enrollment", trial.enrollment),
        ("Conditions", "; ".join(trial.conditions)),
        ("Interventions", interventions),
        ("Sponsor", trial.sponsor),
        ("Collaborators", "; ".join(trial.collaborators)),
        ("Dates", dates),
        ("Primary outcomes", outcomes),
        ("Results posted", "yes" if trial.has_results else "no"),
        ("URL", record_url(trial)),
        ("Summary", " ".join((trial.summary or "(no summary)").split())),
    )
    return "\n".join(lines)


def record_text(record: Record) -> str:
    return paper_text(record) if isinstance(record, Paper) else trial_text(record)


def list_entry(key: int, record: Record, *, extra: str | None = None) -> str:
    """One entry of a result list under its citation key ([3]): title, venue and year,
    identifiers, and the start of the abstract or summary."""
    if isinstance(record, Paper):
        where = ", ".join(p for p in (record.venue, str(record.year) if record.year else None) if p)
        head = f"[{key}] {record.title}" + (f" ({where})" if where else "")
        facts = [authors_line(record), id_line(record)]
        body = snippet(record.abstract)
    else:
        head = f"[{key}] {record.title}"
        facts = [
            id_line(record),
            record.status,
            ", ".join(record.phases) or None,
            "; ".join(record.conditions) or None,
            f"sponsor {record.sponsor}" if record.sponsor else None,
            f"enrollment {record.enrollment}" if record.enrollment is not None else None,
            f"start {record.start_date.isoformat()}" if record.start_date else None,
        ]
        body = snippet(record.summary)
    lines = [head, "   " + " · ".join(f for f in [*facts, extra] if f)]
    if body:
        lines.append(f"   {body}")
    return "\n".join(lines)


def first_listing(earlier: Iterable[int], keys: Sequence[int]) -> list[bool]:
    """For records given these citation keys (``ctx.evidence.key_for``), whether each is
    listed here for the first time in this answer. ``earlier``: the keys the answer had
    listed before this search (``ctx.evidence.shown``, read before keying these records).
    A work another search of the answer listed, or listed twice in one result (a library
    record and its copy from a source), is not listed again."""
    seen = set(earlier)
    first = []
    for key in keys:
        first.append(key not in seen)
        seen.add(key)
    return first
