"""Scope slots a message names: places, date ranges, trial phases, populations, and
organisations (regulators, sponsors). Deterministic; each slot comes with the exact phrase
it was read from, so a caller can take the phrase out of the message's words."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from scholarstream.understanding._dates import MENTION_DATES, date_phrases
from scholarstream.understanding._lexicon import PLACES as MORE_PLACES
from scholarstream.understanding._mesh_kinds import kind_of_match, mesh_match

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

_PLACES = sorted((*US_STATES, *COUNTRIES, *REGIONS, *MORE_PLACES), key=len, reverse=True)
# A place in a name is no place of the study: "Mediterranean diet", "Japanese encephalitis".
_NAMED_AFTER_PLACE = (
    r"(?!\s+(?:diet|diets|cuisine|fever|encephalitis|flu|influenza|variant|strain))"
)
# Words that make a place's name the name of a land or a water in it: "Atlantic forest",
# "Congo basin", "Mekong delta".
_LANDFORMS = (
    r"(?:rain)?forests?|basin|delta|river|coast|highlands|mountains|plateau|islands|"
    r"reef|gulf|bay|desert|peninsula|valley|lakes?|savannah?|wetlands|estuary"
)
_PLACE_RE = re.compile(
    r"\b((?:"
    + "|".join(re.escape(p) for p in _PLACES)
    + rf")(?:\s+(?:{_LANDFORMS})\b)?)\b"
    + _NAMED_AFTER_PLACE,
    re.IGNORECASE,
)
# Lands and waters that only "the" marks as places ("Amazon" is a company too), and names
# of no known place before a landform ("the Mekong delta").
_THE_PLACES = ("Amazon", "Sahel", "Andes", "Alps", "Himalayas", "Balkans", "Caribbean", "Tropics")
_THE_PLACE_RE = re.compile(
    r"(?<=\bthe )((?:" + "|".join(_THE_PLACES) + rf")(?:\s+(?:{_LANDFORMS}))?"
    rf"|[a-z][\w'-]+\s+(?:{_LANDFORMS}))\b",
    re.IGNORECASE,
)
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
_PHASE_RE = re.compile(r"\bphase\s*(1|2|3|4|iv|i{1,3})(?:\s*/\s*(?:1|2|3|4|i{1,3}))?\b", re.I)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}


@dataclass(frozen=True)
class Slots:
    """The scope slots of a text; ``date_range`` is the last date phrase, as written."""

    jurisdictions: tuple[str, ...] = ()
    date_range: str | None = None
    phases: tuple[str, ...] = ()
    populations: tuple[str, ...] = ()
    organisations: tuple[str, ...] = ()


def trial_phase(numeral: str) -> str:
    """ "phase 3" for "3", "iii" or "III"."""
    number = numeral.lower()
    return f"phase {_ROMAN.get(number, number)}"


def trial_phase_of(phrase: str) -> str | None:
    """ "phase 3" for "Phase III", "phase 3" ...; None when ``phrase`` names no phase."""
    match = _PHASE_RE.search(phrase)
    return trial_phase(match.group(1)) if match else None


def read_slots(text: str) -> tuple[Slots, list[str]]:
    """The slots ``text`` names, and the exact phrases they were read from."""
    phrases: list[str] = []

    def found(
        pattern: re.Pattern[str], keep: Callable[[str, re.Match[str]], bool] | None = None
    ) -> list[str]:
        values = []
        for match in pattern.finditer(text):
            if keep is not None and not keep(text, match):
                continue
            phrases.append(match.group(0))
            values.append(match.group(0))
        return values

    places = [
        *found(_PLACE_RE, keep=_is_a_place_here),
        *found(_THE_PLACE_RE, keep=_is_a_place_here),
        *found(_ABBREVIATION_RE),
    ]
    dates = [phrase.text for phrase in date_phrases(text, MENTION_DATES)]
    phrases.extend(dates)
    phases = []
    for match in _PHASE_RE.finditer(text):
        phrases.append(match.group(0))
        phases.append(trial_phase(match.group(1)))
    populations = [p.lower() for p in found(_POPULATION_RE)]
    organisations = found(_REGULATOR_RE)
    for match in _SPONSOR_RE.finditer(text):
        phrases.append(match.group(0))
        organisations.append(match.group(1))
    slots = Slots(
        jurisdictions=_unique(places),
        date_range=dates[-1] if dates else None,
        phases=_unique(phases),
        populations=_unique(populations),
        organisations=_unique(organisations),
    )
    return slots, phrases


# The words after a place read with it as one name: "Atlantic salmon", "African swine fever".
_NAME_WORDS = 2
_FOLLOWING_WORD = re.compile(r"\s+([\w'-]+)")


def _is_a_place_here(text: str, match: re.Match[str]) -> bool:
    """Whether a place's name stands for the place, not for a thing MeSH names after it
    ("Atlantic salmon", "Mediterranean diet", "African Americans")."""
    phrase, end = match.group(0), match.end()
    for _ in range(_NAME_WORDS):
        following = _FOLLOWING_WORD.match(text, end)
        if following is None:
            break
        phrase, end = f"{phrase} {following.group(1)}", following.end()
        named = mesh_match(phrase)
        if named is not None and kind_of_match(named) != "place":
            return False
    return True


def _unique(values: list[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.lower(), value)
    return tuple(seen.values())
