"""MeSH for the search: the vocabulary and the concept mapping live in ``scholarstream.mesh``
(the MeSH that ships with the package, or the file ``search.mesh_file`` names).

Here, what a question says around its concepts, as searchers map it (``question_mesh``):

- a narrower heading the question names: a concept's heading, and under it in the tree a
  heading whose name or entry term the question's words spell out ("dementia with Lewy
  bodies": Dementia, and Lewy Body Disease under it);
- ideas the concept reader passes over because they say how a question asks, searched
  as a concept of their own (AND) when the question states them: diagnostic accuracy
  (Sensitivity and Specificity), the stage, recurrence or nodal spread of a cancer the
  question names;
- the people a question is about, when a concept names them ("in children": Child;
  Adult, Aged, Infant, Adolescent, Pregnancy), never from an instrument's name ("...
  Cognitive Decline in the Elderly (IQCODE)").

Both rule and model strategies get the same headings from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scholarstream.mesh import (
    ConceptMapping,
    HeadingMapping,
    MeshDescriptor,
    MeshMatch,
    MeshVocabulary,
    map_concept,
    normalize,
    preferred_match,
    singular_word,
    us_spelling,
)
from scholarstream.understanding import find_abbreviations

__all__ = [
    "ConceptMapping",
    "HeadingMapping",
    "MeshDescriptor",
    "MeshMatch",
    "MeshVocabulary",
    "QuestionConcept",
    "QuestionMesh",
    "map_concept",
    "map_question",
]

QuestionRole = Literal["population", "outcome", "other"]
# The longest run of the question's words looked up as a narrower heading.
MAX_SPAN = 5
MIN_WORD_LENGTH = 4
_NEOPLASMS = "C04"


@dataclass(frozen=True)
class QuestionConcept:
    """An idea of the question searched as a concept of its own, with its heading."""

    term: str
    synonyms: tuple[str, ...]
    mapping: ConceptMapping
    role: QuestionRole = "other"


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    term: str
    synonyms: tuple[str, ...]
    heading: str
    role: QuestionRole = "other"
    needs: str | None = None
    """A branch of the tree one of the question's concepts must map to ("C04": a cancer)."""
    within: bool = False
    """Searched as a block of its own when a concept of an age group holds its words
    ("women" in "elderly women": Aged AND Female, never Aged OR Female)."""


def _rule(
    pattern: str,
    term: str,
    synonyms: tuple[str, ...],
    heading: str,
    *,
    role: QuestionRole = "other",
    needs: str | None = None,
    within: bool = False,
) -> _Rule:
    return _Rule(re.compile(pattern, re.I), term, synonyms, heading, role, needs, within)


_RULES = (
    # The standard heading of diagnostic test accuracy searches, when the question asks
    # about accuracy (not for "diagnosis of", which every diagnostic question says).
    _rule(
        r"\b(?:accuracy|sensitivity|specificity)\b",
        "diagnostic accuracy",
        ("sensitivity", "specificity"),
        "Sensitivity and Specificity",
        role="outcome",
    ),
    _rule(
        r"\bstag(?:e|es|ing)\b",
        "staging",
        ("stage",),
        "Neoplasm Staging",
        needs=_NEOPLASMS,
    ),
    _rule(
        r"\brecurren(?:t|ce)\b|\brelaps(?:e|ed|ing)\b",
        "recurrence",
        ("recurrent", "relapse"),
        "Neoplasm Recurrence, Local",
        needs=_NEOPLASMS,
    ),
    _rule(
        r"\b(?:lymph[ -]?nodes?|nodal)\s+(?:involvement|metastas[ie]s|spread)\b",
        "lymph node metastasis",
        ("nodal metastasis", "lymph node involvement"),
        "Lymphatic Metastasis",
        needs=_NEOPLASMS,
    ),
    # The people a question is about: their age group, or pregnancy.
    _rule(
        # Boys and girls are children, unless the question says which age they are.
        r"\b(?:children|child|kids?|paediatric|pediatric|schoolchildren)\b"
        r"|(?<!adolescent )(?<!teenage )(?<!teen )\b(?:boys|girls)\b",
        "children",
        ("child", "paediatric", "pediatric"),
        "Child",
        role="population",
    ),
    _rule(
        r"\b(?:newborns?|neonates?|neonatal)\b",
        "newborn",
        ("neonate", "neonatal"),
        "Infant, Newborn",
        role="population",
    ),
    _rule(r"\binfants?\b", "infants", ("infant",), "Infant", role="population"),
    _rule(
        r"\byoung\s+(?:adults?|men|women|people)\b",
        "young adults",
        ("young adult",),
        "Young Adult",
        role="population",
    ),
    _rule(
        r"\b(?:adolescents?|teenagers?)\b",
        "adolescents",
        ("adolescent", "teenager"),
        "Adolescent",
        role="population",
    ),
    _rule(
        r"\b(?:older|elderly|aged)\s+(?:people|persons|adults|patients|women|men)\b"
        r"|\b(?:the\s+)?elderly\b",
        "older people",
        # Not "aged" as a text word: "aged 18 to 65" says nothing of old age.
        ("elderly", "older adults"),
        "Aged",
        role="population",
    ),
    # Women or men: the sex MeSH indexes as a check tag. Girls and boys are that sex, but
    # not women or men (MeSH's Women and Men are adults).
    _rule(r"\bgirls?\b", "girls", ("female",), "Female", role="population", within=True),
    _rule(r"\bboys?\b", "boys", ("male",), "Male", role="population", within=True),
    _rule(
        r"\b(?:women|woman|females?)\b",
        "women",
        ("female",),
        "Female",
        role="population",
        within=True,
    ),
    _rule(r"\b(?:men|males?)\b", "men", ("male",), "Male", role="population", within=True),
    _rule(
        r"(?<!older )(?<!elderly )\badults?\b",
        "adults",
        ("adult",),
        "Adult",
        role="population",
    ),
    _rule(
        r"\bpost-?menopausal(?:\s+(?:women|woman|people|patients))?\b|\bpost-?menopause\b",
        "postmenopausal",
        ("postmenopause",),
        "Postmenopause",
        role="population",
    ),
    _rule(
        r"\bpregnan(?:cy|cies|t(?:\s+(?:women|people|patients|persons))?)\b",
        "pregnancy",
        ("pregnant",),
        "Pregnancy",
        role="population",
    ),
)


def _own_words(question: str) -> str:
    """The question without the long forms of its abbreviations ("Informant
    Questionnaire on Cognitive Decline in the Elderly (IQCODE)" names an instrument, not
    the people the question is about)."""
    text, abbreviations = find_abbreviations(question)
    for long_form in abbreviations.long_to_short:
        text = re.sub(rf"\b{re.escape(long_form)}\b", " ", text, flags=re.I)
    return text


# MeSH reads "boys" and "girls" as Men and Women, which it defines as adults: beside a
# young age group, the sex is searched by its check tag instead.
_ADULT_SEXES = frozenset({"Men", "Women"})
_YOUNG_AGE_GROUPS = frozenset({"Child", "Infant", "Adolescent", "Child, Preschool"})
_SEXES = frozenset({"Female", "Male"})
_YOUNG_SEX_WORDS = re.compile(r"\b(?:boys?|girls?)\b", re.I)


def _attached(
    vocabulary: MeshVocabulary, mapping: ConceptMapping, heading: MeshDescriptor, said: str
) -> ConceptMapping:
    """The rule's heading on the concept, in place of the concept's headings under it
    ("older adults": Aged, not Frail Elderly, which MeSH lists the words under)."""
    young = heading.name in _YOUNG_AGE_GROUPS or bool(_YOUNG_SEX_WORDS.search(mapping.concept))
    adults_only = _ADULT_SEXES if young else frozenset()
    kept = [
        m
        for m in mapping.mappings
        if m.heading not in adults_only
        and (
            (d := vocabulary.descriptor(m.heading)) is None
            or not vocabulary.is_narrower(d, heading)
        )
    ]
    found = HeadingMapping(mapping.concept, heading.name, "entry term", said)
    return ConceptMapping(mapping.concept, (*kept, found))


# PubMed's check tags: headings every record is indexed with where they apply, outside
# the tree the packaged vocabulary is read from.
_CHECK_TAGS = {
    "Female": MeshDescriptor("D005260", "Female"),
    "Male": MeshDescriptor("D008297", "Male"),
}


_AGE_GROUPS = "M01.060"
# Who a population is beside its age: "adolescent girls" is adolescents, and girls.
_SEX_WORDS = re.compile(r"\b(?:women|woman|men|man|girls?|boys?|females?|males?)\b", re.I)


def _names_only(rule: _Rule, concept: str) -> bool:
    """The concept is the rule's words, with at most a word of sex beside them."""
    return any(
        rule.pattern.fullmatch(text)
        for text in (concept.strip(), " ".join(_SEX_WORDS.sub(" ", concept).split()))
        if text
    )


def _names_an_age_group(vocabulary: MeshVocabulary, mapping: ConceptMapping) -> bool:
    """The concept is people of an age ("elderly women", "adolescent girls")."""
    return any(
        n.startswith(_AGE_GROUPS)
        for h in mapping.headings
        if (d := vocabulary.descriptor(h)) is not None
        for n in d.tree_numbers
    )


def _question_rules(
    vocabulary: MeshVocabulary,
    text: str,
    mappings: list[ConceptMapping],
) -> tuple[list[ConceptMapping], list[QuestionConcept]]:
    """The rules' headings: on the concept that is the rule's words ("children"), else
    as a concept of their own; none that a concept already searches."""
    have = {h for m in mappings for h in m.headings}
    branches = {
        n
        for m in mappings
        for h in m.headings
        if (d := vocabulary.descriptor(h)) is not None
        for n in d.tree_numbers
    }
    extra: list[QuestionConcept] = []
    said_sexes = {r.heading for r in _RULES if r.heading in _SEXES and r.pattern.search(text)}
    for rule in _RULES:
        if rule.heading in _SEXES and said_sexes == _SEXES:
            continue  # "boys and girls", "men and women": both sexes, so neither is a limit
        match = rule.pattern.search(text)
        descriptor = vocabulary.descriptor(rule.heading) or _CHECK_TAGS.get(rule.heading)
        if match is None or descriptor is None or descriptor.name in have:
            continue
        if rule.needs is not None and not any(n.startswith(rule.needs) for n in branches):
            continue
        said = " ".join(match.group(0).lower().split())
        have.add(descriptor.name)
        owner = next(
            (i for i, m in enumerate(mappings) if _names_only(rule, m.concept)),
            None,
        )
        # The sex of people of an age is a block of its own: "boys" is Child AND Male.
        if owner is not None and not (
            rule.within and _names_an_age_group(vocabulary, mappings[owner])
        ):
            mappings[owner] = _attached(vocabulary, mappings[owner], descriptor, said)
            continue
        inside = rule.within and any(
            rule.pattern.search(m.concept) and _names_an_age_group(vocabulary, m) for m in mappings
        )
        if rule.role == "population" and not inside:
            continue  # people the reader kept out of the concepts: no block of their own
        mapping = ConceptMapping(
            rule.term, (HeadingMapping(rule.term, descriptor.name, "entry term", said),)
        )
        synonyms = tuple(dict.fromkeys(s for s in (said, *rule.synonyms) if s != rule.term))
        extra.append(QuestionConcept(rule.term, synonyms, mapping, rule.role))
    return mappings, extra


# "dementia with Lewy bodies": MeSH names such a condition the other way round ("Lewy
# body dementia").
_NAMED_WITH = re.compile(r"\b([a-z]{4,}) with ([a-z]{3,}(?: [a-z]{3,})?)\b")


def _inverted(vocabulary: MeshVocabulary, text: str) -> list[str]:
    """Each "<condition> with <feature>" of the text as "<feature> <condition>", the
    feature's last word singular; only where MeSH knows the first word as a disease."""
    forms = []
    for condition, feature in _NAMED_WITH.findall(text):
        known = vocabulary.match(condition, fuzzy=False)
        if known is None or not any(n.startswith("C") for n in known.descriptor.tree_numbers):
            continue
        words = feature.split()
        words[-1] = singular_word(words[-1]) or words[-1]
        forms.append(f"{' '.join(words)} {condition}")
    return forms


def _spans(vocabulary: MeshVocabulary, text: str) -> list[str]:
    words = us_spelling(normalize(text)).split()
    spans = _inverted(vocabulary, " ".join(words))
    for size in range(MAX_SPAN, 0, -1):
        for start in range(len(words) - size + 1):
            span = words[start : start + size]
            if size == 1 and len(span[0]) < MIN_WORD_LENGTH:
                continue
            spans.append(" ".join(span))
    return spans


def _with_narrower(
    vocabulary: MeshVocabulary, mapping: ConceptMapping, spans: Sequence[str], taken: set[str]
) -> ConceptMapping:
    """The concept's mapping and, under its headings, the narrower headings the
    question's words name (``taken``: headings other concepts search already)."""
    above = [
        d
        for m in mapping.mappings
        if m.how not in ("broader", "organism")
        and (d := vocabulary.descriptor(m.heading)) is not None
    ]
    if not above:
        return mapping
    have = set(mapping.headings) | taken
    added: list[HeadingMapping] = []
    for span in spans:
        matched = preferred_match(vocabulary, span)
        if matched is None or matched.heading in have:
            continue
        if any(vocabulary.is_narrower(matched.descriptor, d) for d in above):
            have.add(matched.heading)
            added.append(HeadingMapping(mapping.concept, matched.heading, "narrower", span))
    return ConceptMapping(mapping.concept, (*mapping.mappings, *added)) if added else mapping


# Resistance of a disease or an organism to its treatment; not "insulin resistance",
# "vascular resistance" or "resistance training", which name no resistant form.
_RESISTANCE = re.compile(
    r"(?<!insulin )(?<!vascular )(?<!airway )(?<!antimicrobial )\bresistan(?:t|ce)\b"
    r"(?!\s+(?:training|exercise|band))|\brefractory\b",
    re.I,
)
MAX_RESISTANT = 2


def _with_resistant(
    vocabulary: MeshVocabulary, mapping: ConceptMapping, text: str, taken: set[str]
) -> ConceptMapping:
    """When the question asks about resistance, the resistant forms MeSH has under the
    concept's headings or the heading above them ("rifampicin resistance" in pulmonary
    tuberculosis: Tuberculosis, Multidrug-Resistant; "castration-resistant": Prostatic
    Neoplasms, Castration-Resistant)."""
    said = _RESISTANCE.search(text)
    if said is None:
        return mapping
    found = [d for m in mapping.mappings if (d := vocabulary.descriptor(m.heading)) is not None]
    above = [*found, *(parent for d in found for parent in vocabulary.broader(d))]
    have = set(mapping.headings) | taken
    added: list[HeadingMapping] = []
    for form in vocabulary.named_with({"resistant"}):
        if form.name in have or not any(vocabulary.is_narrower(form, d) for d in above):
            continue
        have.add(form.name)
        added.append(
            HeadingMapping(mapping.concept, form.name, "resistant form", said.group(0).lower())
        )
        if len(added) >= MAX_RESISTANT:
            break
    return ConceptMapping(mapping.concept, (*mapping.mappings, *added)) if added else mapping


@dataclass(frozen=True)
class QuestionMesh:
    """A question's MeSH: each concept's mapping (in the concepts' order), and the ideas
    searched as concepts of their own."""

    concepts: tuple[ConceptMapping, ...]
    extra: tuple[QuestionConcept, ...] = ()

    @property
    def mappings(self) -> list[ConceptMapping]:
        return [*self.concepts, *(q.mapping for q in self.extra)]


def map_question(
    vocabulary: MeshVocabulary,
    question: str,
    concepts: Sequence[tuple[str, Sequence[str]]],
    *,
    limit: int = 3,
) -> QuestionMesh:
    """The MeSH of a question's concepts (``(term, synonyms)`` each): every concept by
    ``map_concept`` (a lone concept may take a generic heading), the narrower headings
    the question names under them, and the headings of what it says beside them."""
    alone = len(concepts) == 1
    mappings = [
        map_concept(vocabulary, term, synonyms, limit=limit, allow_generic=alone)
        for term, synonyms in concepts
    ]
    if not vocabulary:
        return QuestionMesh(tuple(mappings))
    text = _own_words(question)
    spans = _spans(vocabulary, text)
    for index, mapping in enumerate(mappings):
        taken = {h for i, m in enumerate(mappings) if i != index for h in m.headings}
        mapping = _with_narrower(vocabulary, mapping, spans, taken)
        mappings[index] = _with_resistant(vocabulary, mapping, text, taken)
    mappings, extra = _question_rules(vocabulary, text, mappings)
    return QuestionMesh(tuple(mappings), tuple(extra))
