"""Deterministic reading of a message: its content words (what a search should get) and
the scope slots it names (places, date ranges, trial phases, populations, regulators)."""

from __future__ import annotations

import re

from scholarstream.chat.continuity.state import Scope

US_STATES = [
    "Alabama",
    "Alaska",
    "Arizona",
    "Arkansas",
    "California",
    "Colorado",
    "Connecticut",
    "Delaware",
    "Florida",
    "Georgia",
    "Hawaii",
    "Idaho",
    "Illinois",
    "Indiana",
    "Iowa",
    "Kansas",
    "Kentucky",
    "Louisiana",
    "Maine",
    "Maryland",
    "Massachusetts",
    "Michigan",
    "Minnesota",
    "Mississippi",
    "Missouri",
    "Montana",
    "Nebraska",
    "Nevada",
    "Ohio",
    "Oklahoma",
    "Oregon",
    "Pennsylvania",
    "Tennessee",
    "Texas",
    "Utah",
    "Vermont",
    "Virginia",
    "Washington",
    "Wisconsin",
    "Wyoming",
    "New Hampshire",
    "New Jersey",
    "New Mexico",
    "New York",
    "North Carolina",
    "North Dakota",
    "Rhode Island",
    "South Carolina",
    "South Dakota",
    "West Virginia",
    "District of Columbia",
]
COUNTRIES = [
    "Argentina",
    "Australia",
    "Austria",
    "Belgium",
    "Brazil",
    "Bulgaria",
    "Canada",
    "Chile",
    "China",
    "Colombia",
    "Croatia",
    "Cyprus",
    "Czechia",
    "Denmark",
    "Egypt",
    "Estonia",
    "Finland",
    "France",
    "Germany",
    "Greece",
    "Hungary",
    "India",
    "Indonesia",
    "Ireland",
    "Israel",
    "Italy",
    "Japan",
    "Kenya",
    "Korea",
    "Latvia",
    "Lithuania",
    "Luxembourg",
    "Malaysia",
    "Malta",
    "Mexico",
    "Netherlands",
    "Nigeria",
    "Norway",
    "Pakistan",
    "Peru",
    "Philippines",
    "Poland",
    "Portugal",
    "Romania",
    "Russia",
    "Singapore",
    "Slovakia",
    "Slovenia",
    "Spain",
    "Sweden",
    "Switzerland",
    "Taiwan",
    "Thailand",
    "Turkey",
    "Ukraine",
    "Vietnam",
    "European Union",
    "United Kingdom",
    "United States",
    "South Africa",
    "Saudi Arabia",
    "New Zealand",
    "South Korea",
]
REGIONS = (
    "Europe",
    "Asia",
    "Africa",
    "Latin America",
    "North America",
    "South America",
    "Middle East",
    "Scandinavia",
)
# Upper case only: "us" and "eu" are words too.
ABBREVIATED_PLACES = ("EU", "UK", "USA", "US")
REGULATORS = ("FDA", "EMA", "MHRA", "PMDA", "CDC", "WHO", "NICE", "CMS", "Health Canada")
POPULATIONS = (
    "older adults",
    "pregnant women",
    "children",
    "adolescents",
    "infants",
    "neonates",
    "adults",
    "elderly",
    "women",
    "men",
    "veterans",
    "paediatric patients",
    "pediatric patients",
)

_PLACES = sorted((*US_STATES, *COUNTRIES, *REGIONS), key=len, reverse=True)
_PLACE_RE = re.compile(r"\b(" + "|".join(re.escape(p) for p in _PLACES) + r")\b", re.IGNORECASE)
_ABBREVIATION_RE = re.compile(r"\b(" + "|".join(ABBREVIATED_PLACES) + r")\b")
_REGULATOR_RE = re.compile(r"\b(" + "|".join(re.escape(r) for r in REGULATORS) + r")\b")
# Populations named by a risk level or an age bound: "low risk patients", "adults over 70".
POPULATION_PATTERNS = (
    r"(?:low|intermediate|high)[- ]risk (?:patients|adults|people)",
    r"(?:patients|adults|people|women|men|children) (?:over|under|aged|older than|younger "
    r"than) \d+(?: years)?",
    r"(?:post|pre)menopausal women",
    r"(?:people|patients|adults|children|women|men) with (?:type [12] )?[\w'-]+(?: [\w'-]+){0,2}",
)
_POPULATION_RE = re.compile(
    r"\b(" + "|".join([*POPULATION_PATTERNS, *(re.escape(p) for p in POPULATIONS)]) + r")\b",
    re.IGNORECASE,
)
# "sponsored by AstraZeneca": the organisation is the capitalised name after "by".
_SPONSOR_RE = re.compile(
    r"\b(?:sponsored|funded|run|developed|made|marketed) by\s+"
    r"([A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*)*)"
)
_YEAR = r"(?:19|20)\d\d"
_DATE_RE = re.compile(
    rf"\b(?:between\s+{_YEAR}\s+and\s+{_YEAR}|from\s+{_YEAR}\s+(?:to|until)\s+{_YEAR}"
    rf"|(?:since|after|before|from|in|until)\s+{_YEAR}"
    r"|(?:last|past)\s+\d+\s+years?)\b",
    re.IGNORECASE,
)
_PHASE_RE = re.compile(r"\bphase\s*(1|2|3|4|iv|i{1,3})(?:\s*/\s*(?:1|2|3|4|i{1,3}))?\b", re.I)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}

# Question, request and filler words: what a search engine should not get.
FILLER = frozenset(
    (
        "a",
        "about",
        "also",
        "an",
        "and",
        "any",
        "anything",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "get",
        "give",
        "had",
        "has",
        "have",
        "hello",
        "hi",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "just",
        "let",
        "like",
        "list",
        "look",
        "lookup",
        "me",
        "more",
        "my",
        "of",
        "on",
        "only",
        "or",
        "our",
        "please",
        "recent",
        "related",
        "some",
        "tell",
        "than",
        "thank",
        "thanks",
        "the",
        "then",
        "there",
        "to",
        "up",
        "us",
        "want",
        "was",
        "we",
        "were",
        "what",
        "whats",
        "what's",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yes",
        "no",
        "ok",
        "okay",
        "search",
        "searching",
        "find",
        "finding",
        "show",
        "explain",
        "describe",
        "summarise",
        "summarize",
        "check",
        "read",
        "web",
        "internet",
        "online",
        "google",
        "website",
        "websites",
        "site",
        "page",
        "pages",
        "info",
        "information",
        "details",
        "latest",
        "again",
        "same",
        "kind",
        "sort",
        "papers",
        "paper",
        "articles",
        "article",
        "studies",
        "study",
        "literature",
        "library",
        # Words of a user giving leverage ("here is the link", "it may also be called").
        "here",
        "link",
        "links",
        "url",
        "address",
        "may",
        "might",
        "help",
        "called",
        "named",
        "known",
        "try",
        "document",
        # Words that only steer the conversation ("ok forget that, different question").
        "specifically",
        "especially",
        "particularly",
        "exactly",
        "say",
        "says",
        "saying",
        "forget",
        "different",
        "question",
        "switching",
        "gears",
        "topic",
        "unrelated",
        "else",
        "another",
    )
)
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
    )
)
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019\-]*")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


# "the biggest one", "that one", "which ones": "one" standing for something said before.
_ONE_RE = re.compile(
    r"\b(?:the|that|this|which|each|first|second|last|other)\s+(?:\w+\s+)?ones?\b", re.I
)
# Words that only say the user is changing the subject.
_SWITCH_RE = re.compile(
    r"\b(forget (?:that|it|about that)|different (?:question|topic)|switching gears|"
    r"change of (?:topic|subject)|new (?:question|topic)|unrelated|something else)\b",
    re.I,
)
# Aspects of a topic: a question made only of these (and numbers) asks about the topic
# in play ("what were the main adverse events?", "any data beyond 5 years?").
ASPECTS = frozenset(
    (
        "adverse",
        "approval",
        "approved",
        "benefit",
        "benefits",
        "common",
        "competitors",
        "contraindications",
        "cost",
        "costs",
        "coverage",
        "data",
        "dosing",
        "dose",
        "durability",
        "earnings",
        "effects",
        "efficacy",
        "events",
        "evidence",
        "guidelines",
        "interactions",
        "label",
        "labeling",
        "latest",
        "long-term",
        "main",
        "monitoring",
        "mortality",
        "outcomes",
        "pipeline",
        "price",
        "pricing",
        "recent",
        "results",
        "risks",
        "safety",
        "side",
        "status",
        "survival",
        "trial",
        "trials",
        "warnings",
        "year",
        "years",
        "beyond",
        "website",
        # Kinds of evidence: "only RCTs", "any meta-analyses on that?"
        "rct",
        "rcts",
        "randomized",
        "randomised",
        "meta-analysis",
        "meta-analyses",
        "systematic",
        "reviews",
        "review",
        "studies",
        "study",
        "cohort",
        "observational",
        "published",
        "papers",
        "articles",
    )
)


def refers_back(text: str) -> bool:
    return any(w.lower() in BACK_REFERENCES for w in words(text)) or bool(_ONE_RE.search(text))


def changes_subject(text: str) -> bool:
    return bool(_SWITCH_RE.search(text))


def beyond_aspects(content: list[str]) -> list[str]:
    """The content words that are not aspects of a topic or numbers."""
    return [w for w in content if w.lower() not in ASPECTS and not w.isdigit()]


def extract_scope(text: str) -> tuple[Scope, list[str]]:
    """The slots ``text`` names, and the exact phrases they were read from."""
    phrases: list[str] = []

    def found(pattern: re.Pattern[str]) -> list[str]:
        values = []
        for match in pattern.finditer(text):
            phrases.append(match.group(0))
            values.append(match.group(0))
        return values

    places = found(_PLACE_RE) + found(_ABBREVIATION_RE)
    dates = found(_DATE_RE)
    phases = []
    for match in _PHASE_RE.finditer(text):
        phrases.append(match.group(0))
        number = match.group(1).lower()
        phases.append(f"phase {_ROMAN.get(number, number)}")
    populations = [p.lower() for p in found(_POPULATION_RE)]
    regulators = found(_REGULATOR_RE)
    for match in _SPONSOR_RE.finditer(text):
        phrases.append(match.group(0))
        regulators.append(match.group(1))
    scope = Scope(
        jurisdictions=_unique(places),
        date_range=dates[-1] if dates else None,
        phases=_unique(phases),
        populations=_unique(populations),
        organisations=_unique(regulators),
    )
    return scope, phrases


def content_words(text: str, *, drop: list[str] | None = None) -> list[str]:
    """The words a search should get, in order: ``text`` without filler, back-references
    and the ``drop`` phrases."""
    for phrase in drop or []:
        text = re.sub(re.escape(phrase), " ", text, flags=re.IGNORECASE)
    kept = []
    for word in words(text):
        bare = word.lower().strip("'\u2019-")
        if bare in FILLER or bare in BACK_REFERENCES or not bare:
            continue
        kept.append(word.strip("'\u2019-"))
    return kept


def _unique(values: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.lower(), value)
    return list(seen.values())
