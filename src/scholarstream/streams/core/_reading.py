"""What the user's own words already say about the stream they want: whether they state an
aim, which organisations they name, and the topics to search for. The rule-based guide
pre-fills the stream from it (instead of asking again) and draws its suggestions from it.

The rules are about the role a phrase plays in the sentence, not about a field's words:

- the *request* ("I want to follow ...", "keep me up to date on ...", "alert me to ...")
  marks an aim; what follows it is the subject. Its verb counts only where a request puts
  it (first, or after "to", "please", "and", "I"...), so "glucose monitoring" is a topic;
- a *self-description* ("I lead a cardiology group at ...", "I'm a historian ...") is
  about the user, not the subject: only what they say they study or work on is a topic,
  and an organisation named there is their own (offered, never pre-filled);
- a *name* is a run of capitalised words that a sentence does not capitalise on its own:
  after "in" ("in the Baltic", "in Germany") it is a place, a search term, unless a noun
  follows that it qualifies ("in Cavalier King Charles spaniels": one topic, kept whole);
  otherwise an organisation ("from DeepMind and Meta AI", "at MIT");
- a *topic* is a phrase of the subject, without the words that say which documents or how
  recent ("new ... papers", "... trials", "especially ..."), and never a collective of
  people ("a cardiology group", "our lab"): those are who, not what;
- what the user will *do* with what is found is not the subject either: a later request
  ("..., collect it", "and gather them") whose object only points back ("it", "them"),
  what it is for ("for a systematic review", "for my thesis", "to prepare a grant
  proposal", "so I can write ..."), its delivery ("and send a monthly digest") and how
  often ("every two weeks"). These stay in the purpose (the user's own text), never in
  the topics.

A *frequency* ("with a weekly report", "every two weeks", "every 10 days") is how often
the user wants a report: the nearest of daily, weekly, biweekly and monthly.

Deterministic, no model, English only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scholarstream.understanding import (
    COUNTRIES,
    REGIONS,
    US_STATES,
    concept_phrases,
    is_stop_word,
)

MAX_TOPICS = 6

_NUMBERS = {"one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "other": 2}
_NUMBER = r"(\d{1,3}|one|two|three|four|five|six|other)"
_FREQUENCY_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:bi-?weekly|fortnightly|fortnight)\b", re.IGNORECASE), "biweekly"),
    (re.compile(r"\b(?:daily|every\s+day|each\s+day|once\s+a\s+day)\b", re.IGNORECASE), "daily"),
    (
        re.compile(r"\b(?:weekly|every\s+week|each\s+week|once\s+a\s+week)\b", re.IGNORECASE),
        "weekly",
    ),
    (
        re.compile(r"\b(?:monthly|every\s+month|each\s+month|once\s+a\s+month)\b", re.IGNORECASE),
        "monthly",
    ),
)
_EVERY_N = re.compile(rf"\bevery\s+{_NUMBER}\s+(day|week|month)s?\b", re.IGNORECASE)
_PERIODS = {"daily": 1, "weekly": 7, "biweekly": 14, "monthly": 30}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}

_INTENT = re.compile(
    r"""\b(?:
        keep\s+(?:me|us)\s+(?:up\s+to\s+date|informed|posted|updated|abreast)
            (?:\s+(?:on|about|with|of|regarding))?
      | keep\s+(?:up\s+to\s+date|up|abreast)\s+(?:on|about|with)
      | stay\s+(?:on\s+top\s+of|up\s+to\s+date\s+(?:on|with)|current\s+(?:on|with)
            |informed\s+(?:on|about))
      | keep\s+(?:an\s+eye|track|tabs)\s+on
      | (?:alert|notify|tell|inform|update|warn)\s+(?:me|us)(?:\s+(?:to|about|of|on|when))?
      | (?:be\s+)?(?:alerted|notified|informed)\s+(?:to|about|of|on|when)
      | (?:interested|looking)\s+(?:in|for)
      | (?:watch|watching|look|looking)\s+(?:out\s+)?for
      | (?:monitor|monitoring|track|tracking|follow|following|watch|watching|survey|map
            |scan|collect|gather|catch|find|see)(?!-)
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A request's verb stands first in its clause or right after one of these words.
_BEFORE_INTENT_WORDS = (
    "to please and also just i we i'm we're am are really mainly like would can could "
    "help me us , :"
)
_BEFORE_INTENT = frozenset(_BEFORE_INTENT_WORDS.split())
_SELF = re.compile(r"^\W*(?:i|i'm|i\u2019m|we|we're|we\u2019re|my|our)\b", re.IGNORECASE)
_STUDY = re.compile(
    r"\b(?:studying|study|studies|researching|research|working\s+on|work\s+on|works\s+on"
    r"|focus(?:ing|ed)?\s+on|speciali[sz](?:e|es|ing)\s+in|investigating|exploring)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"(?<=[.!?])\s+|[;\n]+")
_WORD = re.compile(r"[^\W_][\w\-]*(?:['\u2019]s)?|[^\w\s]")
_POSSESSIVE = re.compile(r"['\u2019]s$")
_ACRONYM_TERM = re.compile(r"[A-Z0-9\-]*[0-9\-][A-Z0-9\-]*")
"""Capitals with a digit or hyphen ("SGLT2", "GLP-1", "PD-1"): a term, not a name."""
_NAME_JOINERS = frozenset(("of", "for", "de", "&", "und"))
_LEGAL_FORMS = frozenset(
    "inc incorporated corp corporation co ltd limited llc plc ag sa nv se gmbh kk".split()  # noqa: SIM905
)
# The nouns an eponym qualifies ("Alzheimer's disease", "Bayes' theorem"): a topic.
_EPONYM_HEADS = frozenset(
    """disease diseases syndrome syndromes disorder law laws theorem theorems principle
    equation equations sign test tests lemma constant rule method algorithm effect
    hypothesis conjecture paradox model models distribution scale""".split()  # noqa: SIM905
)
_ORG_CUES = frozenset(("from", "by", "at", "of", "with", "and", ",", "between", "versus", "vs"))
_PLACE_CUES = frozenset(("in", "across", "throughout", "around"))
_PLACES = frozenset(p.lower() for p in (*COUNTRIES, *REGIONS, *US_STATES))

# The words that say which documents, or how recent, rather than what about.
_DOCUMENT_WORDS = frozenset(
    """papers paper articles article publications publication preprints preprint literature
    research work works studies study trials trial experiments experiment results findings
    news updates update developments development reports report programs program programme
    programmes pipeline pipelines progress advances activity activities output outputs
    evidence""".split()  # noqa: SIM905
)
_DOCUMENT_QUALIFIERS = frozenset(
    """new recent latest newest current upcoming ongoing emerging published peer-reviewed
    clinical scientific academic any all more further other relevant important key major
    interesting good""".split()  # noqa: SIM905
)
# A phrase headed by one of these names a collective of people: who, not what.
_COLLECTIVES = frozenset(
    """group groups team teams lab labs laboratory laboratories department departments unit
    units centre centres center centers institute institutes clinic clinics hospital
    hospitals university universities company companies firm firms consortium consortia
    organisation organisations organization organizations school schools faculty startup
    startups""".split()  # noqa: SIM905
)


# The user's activity with what is found (part-of-speech free: a word list and the places a
# sentence puts them). Verbs of making or using something, after "to" ("to prepare a grant
# proposal"); and the ones that start a clause of their own after "and", "then" or a comma
# ("and send a monthly digest").
_USE_VERBS = frozenset(
    """write prepare draft support inform plan update build design feed publish complete
    finish produce compile submit summarise summarize teach brief share create make use
    help decide guide start do run conduct read cite send email get put present answer
    assess appraise""".split()  # noqa: SIM905
)
_DELIVERY_VERBS = frozenset(
    """send email mail write prepare summarise summarize compile draft share publish brief
    cite put forward circulate""".split()  # noqa: SIM905
)
# What the user makes or does with the results, after "for a/my/the ...": not a topic.
_OUTPUTS = frozenset(
    """review reviews meta-analysis meta-analyses metaanalysis thesis theses dissertation
    grant grants proposal proposals guideline guidelines report reports paper papers
    manuscript manuscripts chapter chapters book books course courses lecture lectures
    class classes talk talks presentation presentations newsletter newsletters blog
    briefing briefings dossier dossiers submission submissions project projects work job
    teaching students research decision decisions portfolio""".split()  # noqa: SIM905
)
_DETERMINERS = (
    "a an the my our your their his her this that these those upcoming next new future "
    "ongoing current"
)
_WORDS_OF = "|".join
_FOR_OUTPUT = re.compile(
    rf"\bfor\s+(?:(?:{_WORDS_OF(_DETERMINERS.split())})\s+)+(?:[\w-]+\s+){{0,3}}?"
    rf"(?:{_WORDS_OF(re.escape(w) for w in sorted(_OUTPUTS, key=len, reverse=True))})\b"
    r"(?P<mine>\s+(?:that\s+|which\s+)?(?:i|we|i'm|we're|i've|we've|i'll|we'll)\b.*)?",
    re.IGNORECASE | re.DOTALL,
)
_USE_CLAUSE = re.compile(
    rf"""(?:
        \bso\s+(?:that\s+)?(?:i|we|i'm|we're|my|our|you|they|the\s+team)\b
      | \b(?:because|since|as)\s+(?:i|we|i'm|we're|my|our)\b
      | (?<!\bhow\s)(?<!\bwhat\s)(?<!\bwhere\s)(?<!\bwhen\s)(?<!\bwhy\s)
        \b(?:in\s+order\s+)?to\s+(?:{_WORDS_OF(sorted(_USE_VERBS))})\b
      | (?:,|\band\b|\bthen\b)\s+(?:then\s+|also\s+)?(?:{_WORDS_OF(sorted(_DELIVERY_VERBS))})\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""Where what the user does with the results starts; it runs to the end of the subject."""
_LOOSE_END = re.compile(r"(?:[\s,;:]+|\b(?:and|or|then|also|with|a|an|the)\b)+$", re.IGNORECASE)
"""What a cut leaves dangling at the end of a subject ("... solar cells and")."""
_POINTS_BACK = re.compile(r"(?:^\W*|\b[\w-]+\s+)(?:it|It|them|Them)\b(?!-)")
"""A word whose object only points back at the subject ("collect it", "summarise them"):
the user's activity from there on ("IT", information technology, is a topic)."""


@dataclass(frozen=True)
class Reading:
    """One reading of what the user typed."""

    text: str
    states_aim: bool
    """The text asks for something ("I want to follow ..."), so it is a purpose as it is."""
    subject: str
    """What to follow: the requests' objects and what the user studies, else the text."""
    organisations: tuple[str, ...]
    """Organisations named in the subject: what the user wants to follow."""
    own_organisations: tuple[str, ...]
    """Organisations of the user's self-description (their affiliation)."""
    places: tuple[str, ...]
    topics: tuple[str, ...]
    frequency: str | None = None
    """How often the text asks for a report (daily, weekly, biweekly, monthly), if it says."""

    @property
    def terms(self) -> tuple[str, ...]:
        """Search terms: the topics, then the places."""
        return tuple(_unique([*self.topics, *self.places]))


def read_text(text: str) -> Reading:
    """The reading of ``text`` (one message, or several joined)."""
    text = " ".join(text.split())
    subjects: list[str] = []
    context: list[str] = []
    aim = False
    for clause in (c.strip() for c in _CLAUSES.split(text)):
        if not clause:
            continue
        requests = _requests(clause)
        if requests:
            aim = True
            context.append(clause[: requests[0].start()])
            ends = [r.start() for r in requests[1:]] + [len(clause)]
            subjects += [clause[r.end() : end] for r, end in zip(requests, ends, strict=True)]
        elif _SELF.match(clause):
            study = _STUDY.search(clause)
            context.append(clause[: study.start()] if study else clause)
            if study:
                subjects.append(clause[study.end() :])
        else:
            subjects.append(clause)
    subjects = [s for s in (_without_use(s) for s in subjects) if s.strip(" ,.:;")]
    subject_names = [n for s in subjects for n in _names(s)]
    context_names = [n for c in context for n in _names(c)]
    organisations = _unique(n.text for n in subject_names if not n.place)
    own = [
        o for o in _unique(n.text for n in context_names if not n.place) if o not in organisations
    ]
    places = _unique(n.text for n in [*subject_names, *context_names] if n.place)
    named = [*organisations, *own, *places]
    topics = _unique(t for s in subjects for t in _topics(s, named))
    return Reading(
        text=text,
        states_aim=aim,
        subject="; ".join(s.strip(" ,.:") for s in subjects if s.strip(" ,.:")) or text,
        organisations=tuple(organisations),
        own_organisations=tuple(own),
        places=tuple(places),
        topics=tuple(topics[:MAX_TOPICS]),
        frequency=frequency_of(text),
    )


def _without_use(subject: str) -> str:
    """``subject`` without what the user will do with the results: what they make of it
    ("for a systematic review", with "... I am writing" after it), the clause of their
    use ("so I can ...", "to prepare ...", "and send ...", "collect it ..." to the end),
    and how often."""
    subject = _FOR_OUTPUT.sub(" , ", subject)
    starts = [m.start() for m in (_USE_CLAUSE.search(subject), _POINTS_BACK.search(subject)) if m]
    if starts:
        subject = subject[: min(starts)]
    for pattern in (_EVERY_N, *(p for p, _ in _FREQUENCY_WORDS)):
        subject = pattern.sub(" , ", subject)
    return _LOOSE_END.sub("", subject)


def frequency_of(text: str) -> str | None:
    """The report frequency ``text`` names, the nearest one for "every N days/weeks"."""
    every = _EVERY_N.search(text)
    if every:
        count = every.group(1).lower()
        days = (int(count) if count.isdigit() else _NUMBERS[count]) * _UNIT_DAYS[
            every.group(2).lower()
        ]
        return min(_PERIODS, key=lambda name: abs(_PERIODS[name] - days))
    for pattern, frequency in _FREQUENCY_WORDS:
        if pattern.search(text):
            return frequency
    return None


def _requests(clause: str) -> list[re.Match[str]]:
    """The requests of a clause, each where a request puts its verb ("I want to follow X,
    and collect Y": two); what follows each, up to the next, is its object."""
    found: list[re.Match[str]] = []
    for match in _INTENT.finditer(clause):
        before = _WORD.findall(clause[: match.start()].lower())
        if not before or before[-1] in _BEFORE_INTENT:
            found.append(match)
    return found


@dataclass(frozen=True)
class _Name:
    text: str
    place: bool


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() and _ACRONYM_TERM.fullmatch(word) is None


def _names(text: str) -> list[_Name]:
    """The names in ``text``: runs of capitalised words a sentence does not capitalise on
    its own ("Palatin Technologies", "Meta AI", "University of Oxford", "Merck & Co")."""
    tokens = _WORD.findall(text)
    lowered = {t.lower() for t in tokens if t[:1].islower()}
    names: list[_Name] = []
    i = 0
    while i < len(tokens):
        word = _POSSESSIVE.sub("", tokens[i])
        if not _is_capitalised(word) or _skipped(word):
            i += 1
            continue
        run, j = _run(tokens, i)
        name = " ".join(run)
        previous = tokens[i - 1].lower() if i else ""
        before = tokens[i - 2].lower() if i > 1 else ""
        after = tokens[j] if j < len(tokens) else ""
        known_place = name.lower() in _PLACES
        place = (
            previous in _PLACE_CUES or (previous == "the" and before in _PLACE_CUES) or known_place
        )
        if place and not known_place and _qualifies(after):
            i = j  # "in Cavalier King Charles spaniels": part of a topic, kept whole
            continue
        if place or len(run) > 1 or _lone_name(tokens, i, after, lowered):
            names.append(_Name(name, place))
        i = j
    return names


def _qualifies(after: str) -> bool:
    """Does a name followed by ``after`` qualify it, as a breed, a strain or a variety
    does ("Cavalier King Charles spaniels", "Sprague Dawley rats")? A lowercase content
    word does; a stop word, punctuation or the end of the text do not ("in Germany and")."""
    return after[:1].islower() and not is_stop_word(after, "search")


def _skipped(word: str) -> bool:
    return is_stop_word(word, "search") or word.lower() in _LEGAL_FORMS


def _run(tokens: Sequence[str], i: int) -> tuple[list[str], int]:
    """The capitalised words from ``i`` on (joined by "of", "&"...), a legal form after a
    comma included ("Rhythm Pharmaceuticals, Inc"); and where the run ends."""
    run = [_POSSESSIVE.sub("", tokens[i])]
    j = i + 1
    while j < len(tokens) and not _POSSESSIVE.search(tokens[j - 1]):
        nxt = tokens[j]
        if _is_capitalised(nxt) and not is_stop_word(nxt, "search"):
            run.append(_POSSESSIVE.sub("", nxt))
        elif (
            nxt.lower() in _NAME_JOINERS and j + 1 < len(tokens) and _is_capitalised(tokens[j + 1])
        ):
            run.append(nxt)
        elif nxt == "," and j + 1 < len(tokens) and tokens[j + 1].lower() in _LEGAL_FORMS:
            j += 1
            continue
        else:
            break
        j += 1
    return run, j


def _lone_name(tokens: Sequence[str], i: int, after: str, lowered: set[str]) -> bool:
    """Is one capitalised word a name? Not when a sentence starts with it, or the text also
    writes it in lowercase (a topic in title case: "Obesity drugs"); not when it qualifies
    the noun after it ("Bayesian inference", "Alzheimer's disease"), unless it follows a
    word that introduces an organisation ("by Pfizer", "from EPFL") or owns what follows
    ("Palatin's agonist"); capitals alone ("CRISPR", "HIV") only after such a word."""
    word = _POSSESSIVE.sub("", tokens[i])
    previous = tokens[i - 1].lower() if i else ""
    cued = previous in _ORG_CUES
    possessive = _POSSESSIVE.search(tokens[i]) is not None
    if possessive:
        return after.lower() not in _EPONYM_HEADS
    if word.lower() in lowered:
        return False
    if word.isupper():
        return cued
    if i == 0 or tokens[i - 1] in ".!?:":
        return False
    return cued or not after[:1].islower()


def _masked(text: str, names: Sequence[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        pattern = r"[\s,.]+".join(re.escape(word) for word in name.split())
        text = re.sub(rf"(?<!\w){pattern}(?:['\u2019]s?)?\.?(?!\w)", " , ", text)
    return text


def _topics(subject: str, names: Sequence[str]) -> list[str]:
    phrases = [p for group in concept_phrases(_masked(subject, names)) for p in group]
    return [_as_written(t, subject) for t in (_topic(p) for p in phrases) if t]


def _as_written(phrase: str, text: str) -> str:
    """``phrase`` in the case the user wrote it ("Alzheimer's disease")."""
    pattern = r"\W+".join(re.escape(word) for word in phrase.split())
    found = re.search(rf"(?<!\w){pattern}(?!\w)", text, re.IGNORECASE)
    return found.group(0) if found else phrase


def _topic(phrase: str) -> str:
    """``phrase`` as a topic: without the words of which documents or how recent; empty
    for a collective of people or a phrase of nothing else."""
    words = phrase.split()
    while words and (_adverb(words[0]) or words[0].lower() in _DOCUMENT_QUALIFIERS):
        words = words[1:]
    while len(words) > 1 and words[-1].lower() in _DOCUMENT_WORDS:
        words = words[:-1]
    if not words or words[-1].lower() in _COLLECTIVES:
        return ""
    content = [w for w in words if not _filler(w)]
    if not content or all(len(w) < 3 for w in content):
        return ""
    if len(words) == 1 and words[0].lower() in _DOCUMENT_WORDS:
        return ""
    return " ".join(words)


def _adverb(word: str) -> bool:
    """ "especially", "particularly", "mainly": how, not what."""
    lowered = word.lower()
    return len(lowered) > 4 and lowered.endswith("ly") and lowered.isalpha()


def _filler(word: str) -> bool:
    lowered = word.lower()
    return (
        is_stop_word(lowered, "search")
        or is_stop_word(lowered, "continuity")
        or lowered in _DOCUMENT_QUALIFIERS
        or lowered in _DOCUMENT_WORDS
        or not any(c.isalnum() for c in lowered)
    )


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        value = value.strip()
        if value and value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept
