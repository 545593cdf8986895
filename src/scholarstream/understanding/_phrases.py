"""Key phrases and organisation names of a free-text purpose (what the stream guide reads
from what the user typed). Deterministic, no model, English only.

Text is cut into phrases at stop words, punctuation and possessives; a phrase is then cut
where an organisation name starts or ends. A name is a run of capitalised words
("Novo Nordisk"): it stops before a lowercase word, before a capitalised word the text
also writes in lowercase ("Melanocortin" next to "melanocortin": a title-cased topic, not
a name), and after a company suffix ("Palatin Technologies", which only a legal form such
as "Inc" may follow). So "Palatin Technologies melanocortin agonist" is the name "Palatin
Technologies" and the topic "melanocortin agonist".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from scholarstream.understanding._stop_words import stop_words

# The streams row of the one stop-word list: a phrase ends at these words.
_STOP_WORDS = stop_words("streams")
# Words that end a company name and belong to it ("Palatin Technologies").
_COMPANY_SUFFIXES = frozenset(
    """
    technologies technology pharmaceuticals pharmaceutical pharma therapeutics biosciences
    bioscience biotherapeutics biotech biotechnology biopharma biopharmaceuticals biologics
    biosystems laboratories labs sciences diagnostics medical healthcare holdings group
    """.split()  # noqa: SIM905
)
# Legal forms, which may follow a name or a suffix ("Rhythm Pharmaceuticals, Inc.").
_LEGAL_FORMS = frozenset(
    "inc incorporated corp corporation co company ltd limited llc plc ag sa nv se gmbh kk".split()  # noqa: SIM905
)
# Often capitalised at the start of a sentence, never an organisation name alone.
_COMMON_WORDS = frozenset(
    """
    agonist agonists antagonist antagonists inhibitor inhibitors drug drugs therapy therapies
    treatment treatments trial trials study studies clinical disease diseases patients cancer
    obesity diabetes vaccine vaccines antibody antibodies gene cell cells biomarker biomarkers
    oncology cardiology neurology immunology dermatology ophthalmology hematology psychiatry
    fda ema nih who cdc nice mhra pmda us usa eu uk
    """.split()  # noqa: SIM905
)
# Straight and typographic (U+2019) apostrophes.
_TOKEN = re.compile(r"[^\W_](?:[^\W_]|-)*(?:['\u2019]s\b|['\u2019])?|[^\s\w]|_|\n")
_POSSESSIVE = re.compile(r"['\u2019]s?$")
_CAPITALISED = re.compile(r"[A-Z][A-Za-z0-9\-]*")
_ACRONYM_TERM = re.compile(r"[A-Z0-9\-]*[0-9\-][A-Z0-9\-]*")
"""All capitals with a digit or hyphen ("GLP-1", "PD-1", "CAR-T"): a term, not a name."""
_SENTENCE_ENDS = frozenset(".!?;:\n")
MAX_PHRASE_WORDS = 4


@dataclass
class _Phrase:
    words: list[str]
    is_name: bool
    closed: bool = False
    """A name that ended with a company suffix: only a legal form may follow."""

    @property
    def text(self) -> str:
        return " ".join(self.words[:MAX_PHRASE_WORDS])


class _Reader:
    """One pass over the tokens of a text, cutting phrases (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = _TOKEN.findall(text)
        # A capitalised word also written in lowercase is a topic word in title case.
        self.lowercase = {t.lower() for t in self.tokens if t[:1].islower()}
        self.starts = {
            i for i in range(len(self.tokens)) if i == 0 or self.tokens[i - 1] in _SENTENCE_ENDS
        }
        # Capitalised where a sentence does not make it so: a name wherever it appears.
        self.named = {
            t.lower() for i, t in enumerate(self.tokens) if i not in self.starts and t[:1].isupper()
        }
        self.phrases: list[_Phrase] = []
        self.current: _Phrase | None = None

    def read(self) -> list[_Phrase]:
        for i, token in enumerate(self.tokens):
            possessive = _POSSESSIVE.search(token) is not None and token[:1].isalnum()
            word = _POSSESSIVE.sub("", token) if possessive else token
            if not word[:1].isalnum():
                if not self._joins(word, i):
                    self._end()
                continue
            if word.lower() in _STOP_WORDS:
                self._end()
                continue
            self._add(word, i)
            if possessive:
                self._end()
        self._end()
        return [p for p in self.phrases if p.words]

    def _joins(self, mark: str, i: int) -> bool:
        """Punctuation inside a name: "Johnson & Johnson", "Rhythm Pharmaceuticals, Inc"."""
        name = self.current
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else ""
        if name is None or not name.is_name:
            return False
        if mark == "&" and not name.closed and self._is_name_word(after):
            name.words.append("&")
            return True
        return mark == "," and after.lower() in _LEGAL_FORMS

    def _is_name_word(self, word: str) -> bool:
        lowered = word.lower()
        return (
            _CAPITALISED.fullmatch(word) is not None
            and _ACRONYM_TERM.fullmatch(word) is None
            and lowered not in _STOP_WORDS
            and lowered not in _COMMON_WORDS
            and (lowered not in self.lowercase or _is_suffix(lowered))
        )

    def _is_topic_start(self, word: str, i: int) -> bool:
        """ "Sexual dysfunction", "Obesity drugs": a word capitalised only because it starts
        a sentence (or a list item), followed by a lowercase word, starts a topic; not a
        possessive ("Palatin's drug")."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else ""
        return (
            i in self.starts
            and self.tokens[i] == word
            and word.lower() not in self.named
            and after[:1].islower()
            and _POSSESSIVE.sub("", after) not in _STOP_WORDS
        )

    def _add(self, word: str, i: int) -> None:
        lowered = word.lower()
        is_name = self._is_name_word(word) and not self._is_topic_start(word, i)
        current = self.current
        if current is not None and current.is_name:
            if is_name and (not current.closed or lowered in _LEGAL_FORMS):
                current.words.append(word)
                current.closed = current.closed or lowered in _COMPANY_SUFFIXES
                return
            # A name ends at a lowercase word, or after its suffix (a title-cased topic
            # such as "Palatin Technologies Melanocortin Agonist" goes on as a topic).
            self._end()
            self.current = _Phrase([word], is_name=False)
            return
        if current is not None and (not is_name or _is_suffix(lowered)):
            current.words.append(word)
            return
        self._end()
        self.current = _Phrase([word], is_name=is_name and not _is_suffix(lowered))

    def _end(self) -> None:
        if self.current is not None:
            self.phrases.append(self.current)
        self.current = None


def _is_suffix(lowered: str) -> bool:
    return lowered in _COMPANY_SUFFIXES or lowered in _LEGAL_FORMS


def _phrases(text: str) -> list[_Phrase]:
    return _Reader(text).read()


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value and value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept


def proper_names(text: str) -> list[str]:
    """Organisation names in order of appearance ("Palatin Technologies", "Novo Nordisk")."""
    names = _unique(p.text for p in _phrases(text) if p.is_name)
    # "Palatin" is left out when "Palatin Technologies" is there.
    return [n for n in names if not any(o != n and o.startswith(n + " ") for o in names)]


def key_phrases(text: str, *, limit: int = 8) -> list[str]:
    """Content phrases in order of appearance, e.g. "melanocortin agonists", "obesity"."""
    return _unique(p.text for p in _phrases(text))[:limit]


def topic_phrases(text: str, *, limit: int = 8) -> list[str]:
    """Key phrases that are not organisation names (domains, conditions, technologies)."""
    return _unique(p.text for p in _phrases(text) if not p.is_name)[:limit]
