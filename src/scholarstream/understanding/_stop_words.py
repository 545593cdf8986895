"""The one stop-word list: words that name no topic of their own.

Each word stands once, in the row of the readers that skip it. Three readers use the list
and, for now, each keeps the words it skipped before the readers were merged (issue 21):

- ``search``: the concept reader of a search question drops these words inside a phrase
  ("effect", "patients", "studies"); connecting words and verbs cut phrases instead.
- ``continuity``: a chat message's content words (what a follow-up query gets) are the
  words that are neither in this list nor back-references; it also skips the words of a
  user steering the conversation ("forget", "different", "question") or giving a link.
- ``streams``: the stream guide cuts a purpose into key phrases at these words; it also
  skips the words of the monitoring task itself ("monitor", "pipeline", "competitors").

Making the three rows one is a later issue; the rows below show where they differ.
"""

from __future__ import annotations

from typing import Literal

StopWordReader = Literal["search", "continuity", "streams"]
READERS: tuple[StopWordReader, ...] = ("search", "continuity", "streams")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# (words, the readers that skip them); no word is in two rows.
_ROWS: tuple[tuple[frozenset[str], frozenset[StopWordReader]], ...] = (
    (
        _words(
            """a also an any are be been being can could did do does find get had has have how
            i is just latest may me might more my our please recent show some tell the there us
            want was we were what where which who whom why will would you your"""
        ),
        frozenset(READERS),
    ),
    (
        _words(
            """article articles give known link links list literature look paper papers search
            searching studies study what's whats"""
        ),
        frozenset(("search", "continuity")),
    ),
    (
        _words(
            """all current each her his it its most must need new outcome outcomes report
            reports research should their them these they this those very"""
        ),
        frozenset(("search", "streams")),
    ),
    (
        _words(
            """about and anything as at by finding for from help here in into like no of ok
            okay on only or same than then to topic up when whose with yes"""
        ),
        frozenset(("continuity", "streams")),
    ),
    (
        _words(
            """actually adult adults application applications approach approaches art
            association associations benefit benefits best better data effect effectiveness
            effects efficacy evidence existing good humans impact impacts individuals inferior
            influence less looking method methods overview participants patient patients
            people persons population populations publication publications published really
            relation relationship relationships role roles state subjects summary superior
            technique techniques usage use used works worse"""
        ),
        frozenset(("search",)),
    ),
    (
        _words(
            """address again another called check describe details different document else
            especially exactly explain forget gears google hello hi if info information
            internet kind let library lookup named online page pages particularly question
            read related say saying says site sort specifically summarise summarize switching
            thank thanks try unrelated url web website websites"""
        ),
        frozenset(("continuity",)),
    ),
    (
        _words(
            """across activities activity area areas between build business but change changes
            competition competitive competitors create decision decisions development
            developments every everything expected field fields focus follow following
            frequency goal goals he informed intelligence interest interested keep keywords
            know landscape learn make many monitor monitoring much name needs news nor not onto
            other over own per pipeline pipelines planning program programme programmes
            programs purpose see selected set shall she skipped so something space stay
            strategic strategy stream streams such that thing things too topics track tracking
            type under update updates via wants watch watching within without"""
        ),
        frozenset(("streams",)),
    ),
)

STOP_WORDS: frozenset[str] = frozenset().union(*(words for words, _ in _ROWS))
"""Every word of the list, whichever reader skips it."""

_BY_READER: dict[StopWordReader, frozenset[str]] = {
    reader: frozenset().union(*(words for words, readers in _ROWS if reader in readers))
    for reader in READERS
}


def stop_words(reader: StopWordReader) -> frozenset[str]:
    """The words ``reader`` skips (lower case)."""
    return _BY_READER[reader]


def is_stop_word(word: str, reader: StopWordReader) -> bool:
    """Whether ``reader`` skips ``word`` (case-insensitive)."""
    return word.lower() in _BY_READER[reader]


# Words that name no topic of a search alone: a concept made only of them ("diagnostic
# accuracy", "detection", "tests", "setting") is how a question asks, not what it asks about,
# and the search leaves it out, unless the question has no other concept.
GENERIC_CONCEPT_WORDS = frozenset(
    """accuracy accurate assessment assessments clinical current detection detecting
    diagnosis diagnoses diagnostic diagnosing identification identifying performance
    potential presence test tests testing tool tools setting settings screen suspected
    evaluation use utility value values validity validation role early other others
    disease diseases disorder disorders condition conditions patient patients people
    person persons adult adults individuals population populations measurement
    measurements method methods stage stages sign signs treatment treatments management
    living mechanism mechanisms question questions planning interest risk risks outcome
    outcomes effect effects impact impacts association associations""".split()  # noqa: SIM905
)
"""Words that name no topic of a search alone (``read_question`` drops a concept of them,
or of numbers: "women over 35")."""

# Words that stand for something said before ("its side effects", "what about them").
BACK_REFERENCES = frozenset(
    (
        "it",
        "its",
        "it's",
        "their",
        "theirs",
        "them",
        "that",
        "those",
        "this",
        "these",
        "they",
        "there",
        "he",
        "she",
        "his",
        "her",
        "him",
        "similar",  # "anything similar?": like what was asked before
    )
)
