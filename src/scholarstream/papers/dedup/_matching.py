"""The pairwise decision: are two records copies of one work?

``compare`` gathers the evidence (``Evidence``) and runs the rules in ``RULES`` in order;
the first rule with an opinion decides. Vetoes come first, because the costly mistake is a
false merge: a record silently disappearing from a systematic review. The rules follow
the bibliographic logic of ASySD and bib-dedupe:

* a shared identifier (DOI, PMID, PMCID, arXiv, OpenAlex, Semantic Scholar; NCT for two
  trials) decides, *if* the titles agree too: supplements give one DOI to every abstract
  they print;
* notices about an article (erratum, reply, comment, retraction) repeat its title but are
  other works; so are parts and phases ("Part I"/"Part II") and updates of a review (other
  years, other identifiers);
* otherwise a near-identical title needs the same authors, years at most one apart, and
  agreement on *where* it was published: venue with volume or first page, or volume and
  first page. The same title by the same authors in another journal is a conference
  abstract and its paper, or a republication: another record, kept.

Pairs with a close title and nothing against them but not enough for them are
``borderline``: an adjudicator (a model) may look at them; without one they stay apart.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from scholarstream.papers.dedup._normalize import IDENTIFIER_FIELDS, RecordKeys, furniture_title
from scholarstream.papers.dedup._similarity import (
    author_similarity,
    close_title_agrees,
    issues_agree,
    pages_agree,
    same_value,
    subtitle_extends,
    title_extends,
    title_similarity,
    venues_agree,
    years_apart,
)

QUICK_REJECT = 0.80
"""Below this title similarity, and with no shared identifier, two records are distinct
without further comparison (most candidate pairs end here)."""
SHARED_ID_TITLE = 0.80
"""A shared identifier merges only titles at least this similar."""
SAME_TITLE = 0.95
CLOSE_TITLE = 0.90
AUTHORS_AGREE = 0.80
AUTHORS_DIFFER = 0.50

CONFLICTING_IDS = ("doi", "pmid", "pmcid", "arxiv_id")
"""Two different values of these mean two works (one work has one DOI, one PMID). Stream
monitoring's "already reported" check keeps such records apart by the same list."""


class Verdict(StrEnum):
    DUPLICATE = "duplicate"
    BORDERLINE = "borderline"
    DISTINCT = "distinct"


@dataclass(frozen=True, slots=True)
class PairDecision:
    verdict: Verdict
    reason: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """What two records agree and disagree on (``None``: cannot tell)."""

    a: RecordKeys
    b: RecordKeys
    title: float
    extends: bool
    shared_id: str | None
    conflicting_id: str | None
    authors: float | None
    years_apart: int | None
    venue: bool | None
    volume: bool | None
    issue: bool | None
    page: bool | None

    @property
    def located(self) -> bool:
        """Same volume and first page, or same venue with one of them."""
        if self.volume and self.page:
            return True
        return bool(self.venue) and bool(self.volume or self.page)

    @property
    def location_conflict(self) -> bool:
        return self.volume is False or self.page is False or self.issue is False

    @property
    def authors_compatible(self) -> bool:
        return self.authors is None or self.authors >= AUTHORS_AGREE

    @property
    def authors_agree(self) -> bool:
        """Both list authors, and they agree (not merely: nothing against it)."""
        return self.authors is not None and self.authors >= AUTHORS_AGREE

    @property
    def generic_title(self) -> bool:
        """ "Editorial", "Editor's comments", "Stroke rehabilitation", or a title the input
        gives to several works: many works share such titles, so only an identifier or
        the full citation (volume and pages, and no other issue) can tie two copies."""
        return self.a.generic or self.b.generic

    @property
    def shared_title(self) -> bool:
        """The input gives the title to several works (``mark_shared_titles``)."""
        return self.a.shared or self.b.shared

    @property
    def years_compatible(self) -> bool:
        return self.years_apart is None or self.years_apart <= 1


def gather(a: RecordKeys, b: RecordKeys) -> Evidence:
    shared = conflicting = None
    for name in IDENTIFIER_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x and y:
            if x == y:
                shared = shared or name
            elif name in CONFLICTING_IDS:
                conflicting = conflicting or name
    return Evidence(
        a=a,
        b=b,
        title=title_similarity(a, b),
        extends=title_extends(a, b),
        shared_id=shared,
        conflicting_id=conflicting,
        authors=author_similarity(a, b),
        years_apart=years_apart(a, b),
        venue=venues_agree(a, b),
        volume=same_value(a.volume, b.volume),
        issue=issues_agree(a, b),
        page=pages_agree(a, b),
    )


Rule = Callable[[Evidence], PairDecision | None]


def _distinct(reason: str) -> PairDecision:
    return PairDecision(Verdict.DISTINCT, reason)


def _duplicate(reason: str) -> PairDecision:
    return PairDecision(Verdict.DUPLICATE, reason)


def different_kinds(e: Evidence) -> PairDecision | None:
    return _distinct("a paper and a trial registration") if e.a.kind != e.b.kind else None


def different_notices(e: Evidence) -> PairDecision | None:
    if e.a.notice != e.b.notice:
        kind = e.a.notice or e.b.notice
        return _distinct(f"one is a {kind} notice about the other")
    return None


def shared_identifier(e: Evidence) -> PairDecision | None:
    if e.shared_id is None:
        return None
    if e.title >= SHARED_ID_TITLE or e.extends:
        return _duplicate(f"same {e.shared_id}")
    return _distinct(f"same {e.shared_id} but other titles (a supplement's identifier)")


def conflicting_identifier(e: Evidence) -> PairDecision | None:
    """Different identifiers mean different works, unless the whole citation agrees: a
    database sometimes gives a record a wrong DOI (another article of the issue)."""
    if e.conflicting_id is None:
        return None
    citation_agrees = (
        e.conflicting_id == "doi"
        and not e.generic_title
        and e.title >= SAME_TITLE
        and e.page is True
        and e.venue is True
        and e.years_apart == 0
        and e.authors_agree
    )
    return None if citation_agrees else _distinct(f"different {e.conflicting_id}")


def different_titles(e: Evidence) -> PairDecision | None:
    """A title cut short still counts as close: half the longer title, or any length if the
    longer one adds a subtitle of its own ("Unix RDBMS: the next generation" / "...: what
    are the vendors doing ...")."""
    if e.title < CLOSE_TITLE and not (e.extends and (e.title >= 0.5 or subtitle_extends(e.a, e.b))):
        return _distinct("different titles")
    return None


def different_numbers(e: Evidence) -> PairDecision | None:
    """A title cut short may lack the longer one's numbers, but not have others."""
    x, y = sorted((e.a, e.b), key=lambda keys: len(keys.core_title))
    if e.extends:
        missing = Counter(x.numbers) - Counter(y.numbers)
        differ = bool(missing)
    else:
        differ = x.numbers != y.numbers
    return _distinct("the titles give other numbers (parts, phases, series)") if differ else None


def different_years(e: Evidence) -> PairDecision | None:
    return None if e.years_compatible else _distinct("published years apart")


def generic_elsewhere(e: Evidence) -> PairDecision | None:
    """A generic title ("Editor's comments") in another volume, issue or pages, or by
    other authors, is another item: the citation is all that tells such items apart, so
    any disagreement in it separates them, also through other copies."""
    if not (e.generic_title or e.shared_title):
        return None
    if e.location_conflict:
        return _distinct("a generic title in another volume, issue or pages")
    if e.authors is not None and e.authors < AUTHORS_AGREE:
        return _distinct("a generic title by other authors")
    return None


def same_citation(e: Evidence) -> PairDecision | None:
    """Title, volume and pages agree (and the issue does not differ): a one-in-a-million
    coincidence for two works, while author lists get garbled (group names, given and
    family names swapped)."""
    if (
        e.title >= SAME_TITLE
        and e.volume
        and e.page
        and e.issue is not False
        and e.venue is not False
    ):
        return _duplicate("same title, volume and pages")
    return None


def different_authors(e: Evidence) -> PairDecision | None:
    if e.authors is not None and e.authors < AUTHORS_DIFFER:
        return _distinct("different authors")
    return None


def different_locations(e: Evidence) -> PairDecision | None:
    if e.volume is False and e.page is False:
        return _distinct("other volume and pages")
    if e.issue is False and e.volume is not False:
        return _distinct("another issue of the volume")
    if e.page is False and (e.venue or e.volume):
        return _distinct("other pages in the same venue")
    if e.venue is False and e.location_conflict:
        return _distinct("other venue, volume or pages")
    return None


def generic_titles(e: Evidence) -> PairDecision | None:
    """A generic title needs the full citation (``same_citation``); a title the input
    gives to several works needs at least the same venue, volume and authors."""
    if e.generic_title:
        if _short_title_agrees(e):
            return _duplicate("a short title, the same authors, venue and year")
        return _distinct("a title too general to match on")
    if e.shared_title and not (e.volume and e.venue is not False and e.authors_agree):
        return _distinct("a title of several works, without their volume")
    return None


def _short_title_agrees(e: Evidence) -> bool:
    """A title generic only for its length ("Magic conditions", "Diluting ACID"; not
    furniture like "Editor's notes" or "A TSQL2 tutorial", not a title the input gives to
    several works) is one work when everything else agrees: the same words, both author
    lists, the venue and the year (if both give it), and nothing against it in volume,
    issue or pages."""
    return (
        not e.shared_title
        and e.a.core_title == e.b.core_title
        and not furniture_title(e.a.core_title)
        and e.authors_agree
        and e.venue is True
        and e.years_apart in (0, None)
        and not e.location_conflict
    )


def same_location(e: Evidence) -> PairDecision | None:
    if not (e.authors_compatible and e.located):
        return None
    if not e.volume and not e.authors_agree:
        return None  # venue and page alone: an editorial on page 1 of another issue
    if e.title >= SAME_TITLE or e.extends:
        return _duplicate("same title, authors and place of publication")
    if e.volume and e.page and e.venue is not False:
        return _duplicate("close title, same authors, volume and pages")
    return None


def same_venue_no_details(e: Evidence) -> PairDecision | None:
    """Conference papers and reviews often have no volume or pages at all. One title may
    be the other with its subtitle or a note dropped, and one copy may lack the year (the
    venue and authors still agree)."""
    if (
        e.venue
        and (
            e.title >= SAME_TITLE
            or (e.title >= CLOSE_TITLE and close_title_agrees(e.a, e.b))
            or (e.extends and subtitle_extends(e.a, e.b))
        )
        and e.authors_agree
        and e.years_apart in (0, None)
        and not e.location_conflict
    ):
        return _duplicate("same title, authors, venue and year")
    return None


def same_volume_no_venue(e: Evidence) -> PairDecision | None:
    """A copy without venue or pages (a database's short record) still names the volume."""
    if (
        e.title >= SAME_TITLE
        and e.authors_agree
        and e.years_apart == 0
        and e.volume
        and e.venue is None
        and e.page is None
    ):
        return _duplicate("same title, authors, year and volume")
    return None


def same_authors_no_venue(e: Evidence) -> PairDecision | None:
    """A database's short record gives title, authors and year but no venue: nothing in it
    disagrees with a full copy of the same title, the same authors and the same year. Both
    must list authors, and the short record has no volume or pages of its own."""
    if (
        e.venue is None
        and e.title >= SAME_TITLE
        and e.authors_agree
        and e.years_apart == 0
        and not e.location_conflict
        and (_bare(e.a) if not e.a.venue else _bare(e.b))
    ):
        return _duplicate("same title, authors and year (one copy without venue)")
    return None


def otherwise(e: Evidence) -> PairDecision:
    if e.title >= CLOSE_TITLE and e.authors_compatible and not e.location_conflict:
        return PairDecision(Verdict.BORDERLINE, "close title, not enough else to tell")
    return _distinct("not enough in common")


RULES: tuple[Rule, ...] = (
    different_kinds,
    different_notices,
    shared_identifier,
    conflicting_identifier,
    different_titles,
    different_years,
    generic_elsewhere,
    same_citation,
    different_numbers,
    different_authors,
    different_locations,
    generic_titles,
    same_location,
    same_venue_no_details,
    same_volume_no_venue,
    same_authors_no_venue,
)


HARD_VETOES: frozenset[Rule] = frozenset(
    {
        different_kinds,
        different_notices,
        conflicting_identifier,
        different_years,
        generic_elsewhere,
        different_numbers,
    }
)
"""Vetoes that also keep two records out of one cluster when other records link them."""


def conflicts(a: RecordKeys, b: RecordKeys) -> bool:
    """Can these two never be one work, whatever links them through other copies? A
    record that cannot be compared is never one work with another."""
    if not (a.comparable and b.comparable):
        return True
    evidence = gather(a, b)
    for rule in RULES:
        decision = rule(evidence)
        if decision is not None:
            return decision.verdict is Verdict.DISTINCT and rule in HARD_VETOES
    return False


def compare(a: RecordKeys, b: RecordKeys) -> PairDecision:
    if not (a.comparable and b.comparable):
        return _distinct("a record without a title cannot be compared")
    if a.kind == b.kind and a.notice == b.notice:
        quick = title_similarity(a, b)
        if quick < QUICK_REJECT and not _may_share_id(a, b) and not title_extends(a, b):
            return _distinct("different titles")
    evidence = gather(a, b)
    for rule in RULES:
        decision = rule(evidence)
        if decision is not None:
            return decision
    return otherwise(evidence)


def _may_share_id(a: RecordKeys, b: RecordKeys) -> bool:
    return not a.identifiers.isdisjoint(b.identifiers)


MAX_SHARED_GROUP = 24
"""A title carried by more records than this is taken as shared without comparing them."""
MAX_BARE_COPIES = 2
"""Records with a title but no volume, pages or identifier ("bare"): more of one title than
this, written in more ways or dated in more years than this, are taken as several works
("Trade press news", "Distinguished profiles" in every issue; two parts of one title), as
nothing tells which are copies of which."""


SEVERAL_WORKS: frozenset[Rule] = frozenset(
    {conflicting_identifier, different_years, different_authors, different_locations}
)
"""Rules whose "distinct" says that the title names two works, not that a record is odd."""


def _bare(keys: RecordKeys) -> bool:
    return not (keys.volume or keys.first_page or keys.identifiers)


def _bare_ambiguous(group: Sequence[RecordKeys]) -> bool:
    """More bare records than two copies, written in more than two ways or dated in more
    than one year: nothing tells which of them are copies of which. Records alike in every
    field are one copy (a database's export holds some twice)."""
    bare = [keys for keys in group if _bare(keys)]
    if len(bare) <= MAX_BARE_COPIES:
        return False
    spellings = {(k.title, k.authors, k.venue, k.year) for k in bare}
    return len(spellings) > MAX_BARE_COPIES or len({k.year for k in bare}) > 1


def _several_works(group: Sequence[RecordKeys]) -> bool:
    if len(group) > MAX_SHARED_GROUP or _bare_ambiguous(group):
        return True
    for index, a in enumerate(group):
        for b in group[index + 1 :]:
            evidence = gather(a, b)
            for rule in RULES:
                decision = rule(evidence)
                if decision is not None:
                    if decision.verdict is Verdict.DISTINCT and rule in SEVERAL_WORKS:
                        return True
                    break
    return False


def mark_shared_titles(keys: Sequence[RecordKeys]) -> list[RecordKeys]:
    """The keys with ``shared`` set for every record whose title the input gives to
    several works: records of one title (stop words aside) of which two cannot be one work
    (years apart, other identifiers, other volume, issue or pages, other authors), or
    which are too many bare records to tell apart. Such a title ("Reminiscences on
    influential papers", a column in every issue) identifies no work on its own, so its
    records need their volume (and authors) to match, and any other volume, issue or
    pages keeps two of them apart, also through other copies."""
    groups: defaultdict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(keys):
        if record.comparable:
            groups[record.core_title].append(index)
    marked = list(keys)
    for members in groups.values():
        if len(members) > 1 and _several_works([keys[i] for i in members]):
            for i in members:
                marked[i] = replace(keys[i], shared=True)
    return marked
