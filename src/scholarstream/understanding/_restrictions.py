"""What a question restricts besides its topic: study types ("randomized controlled
trials", "meta-analyses"), languages ("in English", "German-language") and exclusions
("not in children", "excluding animal studies"). The query builder reads free-text
feedback ("only RCTs", "without X") with the same functions."""

from __future__ import annotations

import re

# Canonical study-type names (what ParsedIntent.study_types holds) and how people write them.
# "non-randomised" names no randomised trial.
_NOT_NEGATED = r"(?<!non-)(?<!non)(?<!non\s)(?<!quasi-)"
STUDY_TYPES: dict[str, re.Pattern[str]] = {
    "randomized controlled trial": re.compile(
        rf"\b{_NOT_NEGATED}(?:cluster[-\s]+)?randomi[sz]ed"
        r"(?:\s+(?:controlled|clinical|placebo[-\s]controlled|double[-\s]blind(?:ed)?))*"
        r"(?:\s+(?:trials?|stud(?:y|ies)|data|evidence))?\b"
        r"|\bRCTs?\b"
        r"|\b(?:double[-\s]blind(?:ed)?|placebo[-\s]controlled)\s+(?:trials?|stud(?:y|ies))\b",
        re.I,
    ),
    "systematic review": re.compile(r"\bsystematic\s+(?:literature\s+)?reviews?\b", re.I),
    "meta-analysis": re.compile(r"\bmeta-?\s?analy[sz]?[ie]s\b|\bmeta-analytic\b", re.I),
    "cohort study": re.compile(
        r"\b(?:prospective\s+|retrospective\s+|population-based\s+)?cohort"
        r"(?:s|\s+stud(?:y|ies)|\s+data)\b",
        re.I,
    ),
    "case-control study": re.compile(r"\bcase[-\s]control(?:\s+stud(?:y|ies))?\b", re.I),
    "cross-sectional study": re.compile(r"\bcross[-\s]sectional(?:\s+stud(?:y|ies))?\b", re.I),
    "observational study": re.compile(r"\bobservational\s+(?:stud(?:y|ies)|data|evidence)\b", re.I),
    "longitudinal study": re.compile(r"\blongitudinal\s+stud(?:y|ies)\b", re.I),
    "prospective study": re.compile(r"\bprospective\s+stud(?:y|ies)\b", re.I),
    "qualitative study": re.compile(
        r"\bqualitative\s+(?:stud(?:y|ies)|research|evidence|data|work|interviews?)\b", re.I
    ),
    "case series": re.compile(r"\bcase\s+series\b", re.I),
    "pilot study": re.compile(r"\bpilot\s+(?:stud(?:y|ies)|trials?)\b", re.I),
    "quasi-experimental study": re.compile(
        r"\bquasi[-\s]?experimental(?:\s+(?:stud(?:y|ies)|designs?|evidence))?\b", re.I
    ),
    "field study": re.compile(r"\bfield\s+(?:stud(?:y|ies)|trials?|experiments?)\b", re.I),
    "laboratory study": re.compile(
        r"\b(?:lab|laboratory)\s+(?:stud(?:y|ies)|experiments?|work)\b", re.I
    ),
    "real-world study": re.compile(r"\breal[-\s]world\s+(?:stud(?:y|ies)|evidence|data)\b", re.I),
    "modelling study": re.compile(
        r"\b(?:modell?ing|simulation)\s+(?:stud(?:y|ies)|work|papers?)\b", re.I
    ),
    "clinical trial": re.compile(r"\b(?:clinical|controlled)\s+trials?\b", re.I),
    "case report": re.compile(r"\bcase\s+reports?\b", re.I),
    "practice guideline": re.compile(r"\b(?:clinical\s+)?(?:practice\s+)?guidelines\b", re.I),
    "review": re.compile(
        r"\b(?:narrative\s+|literature\s+)?review\s+(?:articles?|papers?)\b"
        r"|\b(?:only|just)\s+(?:narrative\s+|literature\s+)?reviews\b"
        r"|\b(?:narrative\s+|literature\s+)?reviews(?=\s+only\b)",
        re.I,
    ),
}

# "only human studies", "in humans", "no animal studies": a limit to studies in people.
HUMANS_ONLY = re.compile(
    r"\b(?:(?:only|just|limit(?:ed)?\s+to|restrict(?:ed)?\s+to)\s+)?(?:(?:in|on)\s+)?"
    r"(?:humans\b|human\s+(?:studies|study|subjects|participants|data|research|trials|"
    r"populations?)\b|(?:not?|exclude|excluding|except(?:\s+for)?|without)\s+(?:(?:any|the)\s+)?"
    r"(?:animals?|animal\s+(?:studies|models|experiments|research))\b|"
    r"non-?animal\s+studies\b)(?:\s+only\b)?",
    re.I,
)
# ISO 639-1 code by the language's English name.
LANGUAGES: dict[str, str] = {
    "english": "en",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "chinese": "zh",
    "japanese": "ja",
    "korean": "ko",
    "russian": "ru",
    "polish": "pl",
    "swedish": "sv",
    "danish": "da",
    "norwegian": "no",
    "finnish": "fi",
    "turkish": "tr",
    "arabic": "ar",
    "greek": "el",
    "czech": "cs",
    "hungarian": "hu",
    "hebrew": "he",
    "persian": "fa",
}
LANGUAGE_NAMES = {code: name for name, code in LANGUAGES.items()}

_LANGUAGE = "(?:" + "|".join(LANGUAGES) + ")"
_FIND_LANGUAGE = re.compile(rf"\b({_LANGUAGE})\b", re.I)
# "English", "English or German", "English-language, French": one or several languages.
_LANGUAGE_LIST = (
    rf"{_LANGUAGE}(?:[-\s]language)?(?:\s*(?:,|or|and)\s*{_LANGUAGE}(?:[-\s]language)?)*"
)
_NOT_A_PEOPLE = (
    r"(?!\s+(?:patients|adults|children|women|men|people|populations?|cohorts?|"
    r"communit(?:y|ies)|families|students|speakers)|[-\s]+speak(?:ing|ers?))"
)
LANGUAGE_PHRASES = (
    re.compile(
        rf"\b(?:(?:written|published|articles?|papers?|only)\s+)?in\s+{_LANGUAGE_LIST}"
        rf"(?:\s+only)?\b{_NOT_A_PEOPLE}",
        re.I,
    ),
    re.compile(
        rf"\b{_LANGUAGE}[-\s](?:language|only)\b(?:\s*(?:,|or|and)\s*{_LANGUAGE}"
        rf"(?:[-\s]language)?\b{_NOT_A_PEOPLE})*",
        re.I,
    ),
    re.compile(rf"\bonly\s+{_LANGUAGE_LIST}\b{_NOT_A_PEOPLE}", re.I),
)

# "excluding X" asks to leave X out, except where excluding is what a test does: "for
# excluding the diagnosis of X", "to exclude X", "accuracy in ruling out X" name the
# question's purpose, and X is its topic.
_PURPOSE = r"(?<!\bfor )(?<!\bto )(?<!\bin )(?<!\bof )(?<!\bat )(?<!\bwhen )"
_PURPOSE_OBJECT = (
    r"(?!\s+(?:the\s+|a\s+)?(?:diagnos[ie]s|presence|possibility|likelihood)\b)"
    # "without increasing 28-day mortality" states an outcome, it excludes nothing.
    r"(?!\s+(?:increas|decreas|reduc|rais|lower|worsen|improv|affect|chang|caus|compromis|"
    r"harm|los|delay|prolong)ing\b)"
)
_EXCLUSION = re.compile(
    rf"(?:{_PURPOSE}\b(?:excluding|exclude|except(?:\s+for)?|but\s+not|and\s+not|"
    rf"other\s+than|not\s+including|(?<!or\s)without)\b{_PURPOSE_OBJECT}"
    r"|(?:^|[,;(])\s*not\b)\s+(?P<what>[^,.;?!()]+)",
    re.I,
)
_LIST_SEPARATOR = re.compile(r"\s+(?:and|or|nor)\s+|/", re.I)
_LEADING_FILLER = re.compile(
    r"^(?:(?:(?:interested|looking|focused|focusing)\s+(?:in|at|on)|in|on|about|the|any|"
    r"those|studies\s+(?:in|on|of))\s+)+",
    re.I,
)
_TRAILING_FILLER = re.compile(r"\s+(?:papers|articles|please)$", re.I)


def _cut(text: str, match: re.Match[str]) -> str:
    return " ".join((text[: match.start()] + " " + text[match.end() :]).split())


def find_study_types(text: str) -> tuple[str, list[str]]:
    """The text without its study-type phrases, and the canonical types named."""
    found: list[str] = []
    for name, pattern in STUDY_TYPES.items():
        if pattern.search(text):
            found.append(name)
            text = " ".join(pattern.sub(" ", text).split())
    return text, found


def find_languages(text: str) -> tuple[str, list[str]]:
    """The text without its language phrases, and their ISO 639-1 codes."""
    codes: list[str] = []
    for pattern in LANGUAGE_PHRASES:
        while (match := pattern.search(text)) is not None:
            codes.extend(c for c in codes_in(match.group(0)) if c not in codes)
            text = _cut(text, match)
    return text, codes


def codes_in(phrase: str) -> list[str]:
    """The ISO 639-1 codes of the languages a phrase names ("in English or French")."""
    codes: list[str] = []
    for name in _FIND_LANGUAGE.findall(phrase):
        if LANGUAGES[name.lower()] not in codes:
            codes.append(LANGUAGES[name.lower()])
    return codes


def language_code(value: str) -> str | None:
    """An ISO 639-1 code from a code or an English name ("English", "en", "EN")."""
    value = value.strip().lower()
    if value in LANGUAGE_NAMES:
        return value
    return LANGUAGES.get(value)


def clean_phrase(text: str) -> str:
    text = " ".join(text.split())
    while True:
        stripped = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", text))
        if stripped == text:
            return text
        text = stripped


def find_exclusions(text: str) -> tuple[str, list[str]]:
    """The text without "not X" / "excluding X" / "without X" phrases, and each X."""
    excluded: list[str] = []
    while (match := _EXCLUSION.search(text)) is not None:
        for part in _LIST_SEPARATOR.split(match.group("what")):
            what = clean_phrase(part)
            if what and what.lower() not in (e.lower() for e in excluded):
                excluded.append(what)
        text = _cut(text, match)
    return text, excluded
