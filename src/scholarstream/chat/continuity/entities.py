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

_PLACES = sorted((*US_STATES, *COUNTRIES), key=len, reverse=True)
_PLACE_RE = re.compile(r"\b(" + "|".join(re.escape(p) for p in _PLACES) + r")\b", re.IGNORECASE)
_ABBREVIATION_RE = re.compile(r"\b(" + "|".join(ABBREVIATED_PLACES) + r")\b")
_REGULATOR_RE = re.compile(r"\b(" + "|".join(re.escape(r) for r in REGULATORS) + r")\b")
_POPULATION_RE = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in POPULATIONS) + r")\b", re.IGNORECASE
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


def refers_back(text: str) -> bool:
    return any(w.lower() in BACK_REFERENCES for w in words(text))


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
