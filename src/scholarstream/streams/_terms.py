"""Plain-text helpers for the rule-based guide: key phrases, proper names and name ideas
drawn from what the user typed. Deterministic, no model, English only."""

from __future__ import annotations

import re
from collections.abc import Iterable

_STOP_WORDS = frozenset(
    """
    a an the and or but nor of for to in on at by with from into onto about as is are was were
    be been being this that these those it its i me my we us our you your they them their he
    she his her who whom whose which what when where why how all any some each every other
    such no not only own same so than too very can could should would will shall may might
    must do does did have has had just also more most much many new latest recent current
    want wants need needs like interested interest please help keep stay up informed
    monitor monitoring track tracking follow following watch watching find finding see show
    tell know learn set create build make get stream streams research report reports
    pipeline pipelines program programs programme programmes landscape developments
    development updates update news changes change activity activities space area areas
    field fields topic topics thing things something anything everything
    selected skipped type name frequency focus goals goal outcomes outcome keywords
    competitors purpose business expected over under between within without across via per
    then there here yes okay ok competitive competition intelligence strategic strategy
    planning decisions decision
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*(?:'s|')?|[^\sA-Za-z0-9]")
_NAME_WORD = re.compile(r"[A-Z][A-Za-z0-9\-]*")
MAX_PHRASE_WORDS = 4


def _phrases(text: str) -> list[list[str]]:
    """Runs of content words, broken at stop words, punctuation and possessives."""
    runs: list[list[str]] = []
    run: list[str] = []
    for token in _WORD.findall(text):
        possessive = token.endswith("'") or token.endswith("'s")
        word = token.removesuffix("'s").removesuffix("'")
        if not word[:1].isalnum() or word.lower() in _STOP_WORDS:
            if run:
                runs.append(run)
            run = []
            continue
        run.append(word)
        if possessive:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return [r[:MAX_PHRASE_WORDS] for r in runs]


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value and value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept


def proper_names(text: str) -> list[str]:
    """Capitalised runs ("Palatin Technologies", "Novo Nordisk"): organisation names."""
    runs = _phrases(text)
    names = _unique(" ".join(r) for r in runs if all(_NAME_WORD.fullmatch(w) for w in r))
    # "Palatin" is left out when "Palatin Technologies" is there.
    return [n for n in names if not any(o != n and o.startswith(n + " ") for o in names)]


def key_phrases(text: str, *, limit: int = 8) -> list[str]:
    """Content phrases in order of appearance, e.g. "melanocortin agonists", "obesity"."""
    return _unique(" ".join(run) for run in _phrases(text))[:limit]


def topic_phrases(text: str, *, limit: int = 8) -> list[str]:
    """Key phrases that are not organisation names (domains, conditions, technologies)."""
    phrases = key_phrases(text, limit=limit * 2)
    return [p for p in phrases if not all(_NAME_WORD.fullmatch(w) for w in p.split())][:limit]


def title_case(phrase: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in phrase.split())


def name_ideas(text: str, *, limit: int = 3) -> list[str]:
    """Stream names from the purpose: "<Organisation> <Topic>", "<...> Monitor", ..."""
    names = proper_names(text)
    topics = [title_case(p) for p in topic_phrases(text)]
    subject = names[0] if names else (topics[0] if topics else "")
    if not subject:
        return []
    topic = next((t for t in topics if t.lower() != subject.lower()), "")
    ideas = [
        f"{subject} {topic}".strip(),
        f"{subject} Monitor",
        f"{topic or subject} Intelligence",
        f"{subject} Watch",
    ]
    return _unique(idea[:120].strip() for idea in ideas)[:limit]
