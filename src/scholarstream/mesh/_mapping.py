"""A concept's MeSH headings, and how each was found.

In order, stopping at the first step that finds a heading:

1. the concept's term or a synonym as a heading or an entry term ("heart attack" ->
   Myocardial Infarction), in US spelling ("vulval cancer" -> Vulvar Neoplasms) or with its
   last word singular or plural;
2. parts of the phrase, when the whole has no heading: the longest runs of its words that
   have one, the head of the phrase (its last words) first ("invasive aspergillosis" ->
   Aspergillosis); a part never starts or ends with a function word;
3. a close spelling of a heading (rapidfuzz, numbers must agree);
4. the tree: the heading every heading that names all the term's words sits under.

Then, as searchers add them: the heading above a whole-concept heading that names the
concept's words, the body part a condition found as a whole is named after ("rotator cuff
tears" -> Rotator Cuff), and the organism of an infection (Aspergillosis -> Aspergillus).

Headings that say nothing about a topic (Diagnosis, Patients, Methods, ...) are never
given for a part of a phrase, nor for a whole concept unless the caller allows it (a
question that is about nothing else).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scholarstream.mesh._text import (
    is_abbreviation_word,
    normalize,
    singular_word,
    us_word,
    words_of,
)
from scholarstream.mesh._vocabulary import MeshDescriptor, MeshMatch, MeshVocabulary

MappingKind = Literal[
    "heading",
    "entry term",
    "US spelling",
    "MeSH wording",
    "word form",
    "abbreviation",
    "phrase part",
    "near spelling",
    "broader",
    "organism",
    "infection",
    "treated disease",
    "narrower",
    "resistant form",
]
MAX_PARTS = 2
MIN_PART_LENGTH = 4

# Headings that name no topic of a question: a term meets them through its generic words
# ("for the diagnosis of", "patients", "accuracy").
GENERIC_HEADINGS = frozenset(
    normalize(name)
    for name in (
        "Diagnosis",
        "Disease",
        "Patients",
        "Persons",
        "Humans",
        "Population",
        "Methods",
        "Research",
        "Therapeutics",
        "Syndrome",
        "Signs and Symptoms",
        "Chronic Disease",
        "Acute Disease",
        "Time",
        "Risk",
        "Role",
        "Association",
        "Reference Values",
        "Research Design",
        "Data Accuracy",
        "Names",
        "Judgment",
        "Diagnostic Techniques and Procedures",
        "Clinical Laboratory Techniques",
        "Laboratory Test",
        "Evaluation Study",
        "Evaluation Studies as Topic",
        "Sensitivity and Specificity",
        "Early Diagnosis",
        "Disease Progression",
        "Pathologic Processes",
        "Pathological Conditions, Signs and Symptoms",
        "Symptom Assessment",
        "Tissues",
        "Organizations",
        "Health",
        "Life",
        "Light",
        "Work",
        "Head",
        "Set, Psychology",
        "Aged",
        "Adult",
        "Child",
        "Female",
        "Male",
    )
)
_FUNCTION_WORDS = frozenset(
    """of the a an and or in on for with without to by at from due following versus vs via
    into than as per other others""".split()  # noqa: SIM905
)
# Words that say how far along, how sure or how severe a condition is, not which one: a
# phrase without its heading loses one of them before it loses a word that names the
# condition ("chronic liver disease" -> "liver disease", not "chronic disease").
QUALIFIER_WORDS = frozenset(
    """chronic acute advanced primary secondary recurrent early late invasive active severe
    mild moderate suspected resectable minor major current impending local locoregional
    clinical clinically apparent potential possible probable persistent stable
    uncomplicated complicated incident prevalent new""".split()  # noqa: SIM905
)
# Entry terms that PubMed maps to a heading a searcher would not use for the words: the
# heading a librarian gives them instead ("surgery" names operations, not the specialty
# General Surgery; "magnetic resonance" in an imaging phrase is MRI, not spectroscopy).
PREFERRED_HEADINGS = {
    "surgery": "Surgical Procedures, Operative",
    "surgical": "Surgical Procedures, Operative",
    "operation": "Surgical Procedures, Operative",
    "magnetic resonance": "Magnetic Resonance Imaging",
    "mr": "Magnetic Resonance Imaging",
    # NLM files "covid vaccine" under one brand (ChAdOx1 nCoV-19); a searcher means all.
    "covid vaccine": "COVID-19 Vaccines",
    "covid vaccines": "COVID-19 Vaccines",
}
_TOPICAL = frozenset("ABCDEFGN")
_HOW: dict[str, MappingKind] = {
    "exact": "heading",
    "inverted": "heading",
    "entry": "entry term",
    "spelling": "US spelling",
    "wording": "MeSH wording",
    "word form": "word form",
    "abbreviation": "abbreviation",
    "fuzzy": "near spelling",
}


@dataclass(frozen=True)
class HeadingMapping:
    """One heading of a concept: which words of the concept found it, and how."""

    term: str
    heading: str
    how: MappingKind
    matched: str
    """The wording that met the heading (lower case): the term, its US spelling, a part."""

    def describe(self) -> str:
        if self.how == "heading":
            return f"{self.term} → {self.heading} (MeSH)"
        if self.how in (
            "entry term",
            "near spelling",
            "word form",
            "US spelling",
            "MeSH wording",
            "abbreviation",
        ):
            via = "" if self.matched == normalize(self.term) else f" “{self.matched}”"
            return f"{self.term} → {self.heading} ({self.how}{via})"
        if self.how == "organism":
            return f"{self.term} → {self.heading} (the organism that causes {self.matched})"
        if self.how == "infection":
            return f"{self.term} → {self.heading} (the infection {self.matched} causes)"
        if self.how == "treated disease":
            return f"{self.term} → {self.heading} (the disease the drug class is against)"
        if self.how == "resistant form":
            asked = f"the question asks about {self.matched}"
            return f"{self.term} → {self.heading} (resistant form: {asked})"
        if self.how == "narrower":
            return f"{self.term} → {self.heading} (narrower heading the question names)"
        if self.how == "phrase part":
            return f"{self.term} → {self.heading} (part of the phrase “{self.matched}”)"
        if self.matched and self.matched != normalize(self.term):
            return f"{self.term} → {self.heading} (broader heading above {self.matched})"
        return f"{self.term} → {self.heading} (broader heading in the MeSH tree)"


# Heading names that mean something else as a text word: "aged 18 to 65".
_NOT_TEXT_WORDS = frozenset({"aged"})


@dataclass(frozen=True)
class ConceptMapping:
    concept: str
    mappings: tuple[HeadingMapping, ...] = ()

    @property
    def headings(self) -> list[str]:
        return list(dict.fromkeys(m.heading for m in self.mappings))

    @property
    def unexploded(self) -> list[str]:
        """The broader headings, searched as indexed and never exploded: "Heart Diseases"
        above Heart Failure catches what was indexed at that level, not every other heart
        disease below it."""
        named = {m.heading for m in self.mappings if m.how != "broader"}
        return [h for h in self.headings if h not in named]

    @property
    def parts_together(self) -> bool:
        """The headings name different parts of the concept and stand for it only
        together ("hip fracture surgery": Hip Fractures AND Surgical Procedures), never
        one alone, which would widen the concept to all surgery."""
        if len(self.mappings) < 2 or any(m.how != "phrase part" for m in self.mappings):
            return False
        words = [set(m.matched.split()) for m in self.mappings]
        return all(not (a & b) for i, a in enumerate(words) for b in words[i + 1 :])

    @property
    def synonyms(self) -> list[str]:
        """Wordings worth searching as text too: the term in US spelling, and the
        heading's own name when the term met it as an entry term."""
        found: dict[str, None] = {}
        for mapping in self.mappings:
            if mapping.how in ("US spelling", "MeSH wording"):
                found.setdefault(mapping.matched)
            elif (
                mapping.how == "entry term"
                and "," not in mapping.heading
                and mapping.heading.lower() not in _NOT_TEXT_WORDS
            ):
                found.setdefault(mapping.heading.lower())
        return list(found)


def _generic(descriptor: MeshDescriptor) -> bool:
    return normalize(descriptor.name) in GENERIC_HEADINGS


def _topical(descriptor: MeshDescriptor) -> bool:
    """In the branches of the tree that name a question's topics: anatomy, organisms,
    diseases, chemicals and drugs, techniques and equipment, psychiatry and psychology,
    phenomena, health care; or a category's root (Neoplasms). Not the humanities, places,
    publication types or persons, which a part of a phrase names only by chance ("red
    flags" -> Emblems and Insignia)."""
    return not descriptor.tree_numbers or any(n[0] in _TOPICAL for n in descriptor.tree_numbers)


def _mapping(term: str, found: MeshMatch, how: MappingKind | None = None) -> HeadingMapping:
    return HeadingMapping(
        term=term,
        heading=found.heading,
        how=how or _HOW[found.kind],
        matched=found.key or normalize(term),
    )


def preferred_match(
    vocabulary: MeshVocabulary, wording: str, *, fuzzy: bool = False
) -> MeshMatch | None:
    """The vocabulary's match, or the heading a librarian prefers for the wording."""
    preferred = PREFERRED_HEADINGS.get(normalize(wording))
    if preferred is not None:
        descriptor = vocabulary.descriptor(preferred)
        if descriptor is not None:
            return MeshMatch(descriptor, "entry", key=normalize(wording))
    return vocabulary.match(wording, fuzzy=fuzzy)


def _without_a_modifier(vocabulary: MeshVocabulary, term: str) -> list[HeadingMapping]:
    """The heading of the phrase less one of its modifiers, its head kept ("oral cavity
    cancer" -> "oral cancer" -> Mouth Neoplasms)."""
    words = words_of(term)
    if len(words) < 3:
        return []
    order = sorted(
        range(len(words) - 2, -1, -1), key=lambda i: words[i].lower() not in QUALIFIER_WORDS
    )
    for skipped in order:
        rest = [w for i, w in enumerate(words) if i != skipped]
        if rest[0].lower() in _FUNCTION_WORDS:
            continue
        matched = preferred_match(vocabulary, " ".join(rest))
        if matched is not None and _usable(matched.descriptor):
            return [_mapping(term, matched, "phrase part")]
    return []


# Words that end a phrase with what is measured of its subject, not a kind of it: "dengue
# vaccine effectiveness" is about Dengue Vaccines before Vaccine Efficacy.
_MEASURED = frozenset(
    """effectiveness efficacy safety effects outcomes uptake use adherence coverage
    acceptability acceptance performance""".split()  # noqa: SIM905
)


def _in_parts(vocabulary: MeshVocabulary, term: str) -> list[HeadingMapping]:
    """The headings of a phrase no heading names whole: of the phrase less a modifier,
    else of its parts; of its parts first when it ends with what is measured of them."""
    words = words_of(term)
    if words and words[-1].lower() in _MEASURED:
        return _parts(vocabulary, term) or _without_a_modifier(vocabulary, term)
    return _without_a_modifier(vocabulary, term) or _parts(vocabulary, term)


def _specific(descriptor: MeshDescriptor) -> bool:
    """Three levels down the tree or deeper (Serum, Groin; not Proteins, Blood)."""
    return any(n.count(".") >= 2 for n in descriptor.tree_numbers)


def _usable(descriptor: MeshDescriptor) -> bool:
    return not _generic(descriptor) and _topical(descriptor)


def _parts(vocabulary: MeshVocabulary, term: str) -> list[HeadingMapping]:
    """Headings of the longest runs of the term's words, the phrase's head first."""
    words = words_of(term)
    size = len(words)
    covered = [False] * size
    found: list[HeadingMapping] = []
    headings: set[str] = set()
    for length in range(size - 1, 0, -1):
        for start in range(size - length, -1, -1):
            span = words[start : start + length]
            if all(covered[start : start + length]):
                continue
            if span[0].lower() in _FUNCTION_WORDS or span[-1].lower() in _FUNCTION_WORDS:
                continue
            if length == 1 and len(span[0]) < MIN_PART_LENGTH and not is_abbreviation_word(span[0]):
                continue
            matched = preferred_match(vocabulary, " ".join(span))
            if matched is None or matched.heading in headings:
                continue
            if not _usable(matched.descriptor):
                continue
            # A part without the phrase's head only qualifies it ("protein" in "protein
            # structure prediction"): searched only when its heading is a specific one.
            if start + length < size and not _specific(matched.descriptor):
                continue
            headings.add(matched.heading)
            found.append(_mapping(term, matched, "phrase part"))
            covered[start : start + length] = [True] * length
            if len(found) >= MAX_PARTS:
                return found
    return found


def _content_words(term: str) -> set[str]:
    words = set()
    for word in words_of(term):
        lowered = word.lower()
        if lowered in _FUNCTION_WORDS:
            continue
        lowered = us_word(lowered)
        words.add(singular_word(lowered) or lowered)
    return words


def _broader(vocabulary: MeshVocabulary, term: str) -> HeadingMapping | None:
    """The deepest heading of the tree above every heading whose name holds all the
    term's words ("intracranial vascular malformations" -> the heading above
    "Intracranial Arteriovenous Malformations" and its siblings)."""
    wanted = _content_words(term)
    if len(wanted) < 2:
        return None
    narrower = [
        d
        for d in vocabulary.named_with(wanted)
        if not _generic(d)
        and _topical(d)
        and d.tree_numbers
        and normalize(d.name) != normalize(term)
    ]
    if len(narrower) < 2:
        return None
    common: str | None = None
    for number in (n for d in narrower for n in d.tree_numbers[:1]):
        if common is None:
            common = number
            continue
        shared = []
        for a, b in zip(common.split("."), number.split("."), strict=False):
            if a != b:
                break
            shared.append(a)
        common = ".".join(shared)
    if not common or common.count(".") < 1:
        return None
    parent = vocabulary.by_tree_number(common)
    if parent is None or _generic(parent) or not (_content_words(parent.name) & wanted):
        return None
    return HeadingMapping(term, parent.name, "broader", normalize(term))


def map_concept(
    vocabulary: MeshVocabulary,
    term: str,
    synonyms: Sequence[str] = (),
    *,
    limit: int = 3,
    allow_generic: bool = False,
    broader: bool = True,
) -> ConceptMapping:
    """The headings of one concept (its term and synonyms), at most ``limit``, and with
    ``broader`` the heading above each whole-concept heading that names the concept's
    words."""
    if not vocabulary:
        return ConceptMapping(term)
    terms = list(dict.fromkeys(t for t in (term, *synonyms) if t.strip()))
    found: list[HeadingMapping] = []
    for position, wording in enumerate(terms):
        matched = preferred_match(vocabulary, wording)
        if matched is None or (_generic(matched.descriptor) and not allow_generic):
            continue
        # A synonym's heading must name a topic ("paediatric" is no discipline here).
        if position and not _topical(matched.descriptor):
            continue
        if matched.heading not in (m.heading for m in found):
            found.append(_mapping(wording, matched))
    if not found:
        for wording in terms:
            found = _in_parts(vocabulary, wording)
            if found:
                break
    if not found:
        matched = vocabulary.match(term)
        if matched is not None and not _generic(matched.descriptor):
            found = [_mapping(term, matched)]
    if not found:
        above = _broader(vocabulary, term)
        found = [above] if above is not None else []
    whole = bool(found) and found[0].how not in ("phrase part", "broader")
    found = found[:limit]
    if whole:
        found += _anatomy(vocabulary, term, found)
    if broader:
        found += _broader_headings(vocabulary, term, found)
    found += _treated_disease(vocabulary, term, found)
    found += _organisms(vocabulary, term, found)
    return ConceptMapping(term, tuple(found))


_AGAINST = re.compile(r"\banti[- ]?([a-z]{5,}(?:\s+[a-z]{5,})?)", re.I)
_DISEASES = "C"


def _treated_disease(
    vocabulary: MeshVocabulary, term: str, found: Sequence[HeadingMapping]
) -> list[HeadingMapping]:
    """The disease an "anti-<disease>" drug class names ("second-line anti-tuberculosis
    drugs" -> Antitubercular Agents and Tuberculosis), as searchers pair a drug class
    with the disease it treats."""
    said = _AGAINST.search(term)
    if said is None:
        return []
    have = {m.heading for m in found}
    words = said.group(1).split()
    for size in range(len(words), 0, -1):
        matched = vocabulary.match(" ".join(words[:size]), fuzzy=False)
        if matched is None or matched.heading in have or not _usable(matched.descriptor):
            continue
        if any(n.startswith(_DISEASES) for n in matched.descriptor.tree_numbers):
            return [_mapping(term, matched, "treated disease")]
    return []


# Branches of the anatomy tree a condition is named after: body regions, the
# musculoskeletal system, organs and organ systems, the mouth and jaw (not cells,
# tissues or fluids: "erythrocyte sedimentation rate" is no test of erythrocytes).
_ANATOMY = ("A01", "A02", "A03", "A04", "A05", "A06", "A07", "A08", "A09", "A10", "A14")


def _anatomy(
    vocabulary: MeshVocabulary, term: str, found: Sequence[HeadingMapping]
) -> list[HeadingMapping]:
    """For a condition found as a whole, the heading of the body part its name starts
    with ("rotator cuff tears" -> Rotator Cuff Injuries and Rotator Cuff), as searchers
    add the structure to the injury."""
    have = {m.heading for m in found}
    head = normalize(term)
    added = []
    for part in _parts(vocabulary, term):
        descriptor = vocabulary.descriptor(part.heading)
        if descriptor is None or part.heading in have or head.endswith(part.matched):
            continue
        if any(n.startswith(_ANATOMY) for n in descriptor.tree_numbers):
            have.add(part.heading)
            added.append(part)
    return added


# An infection named after its organism: the organism's stem is the name less its ending
# ("aspergillosis" -> "aspergill": Aspergillus; "schistosomiasis" -> Schistosoma).
_INFECTION_ENDING = re.compile(r"(?:iasis|asis|osis)$")
_INFECTIONS = "C01"
_ORGANISMS = "B"
MIN_STEM = 5


# Words of an organism's name that name no particular one ("Human Papillomavirus Viruses").
_ORGANISM_GENERIC = frozenset(["human", "virus", "viruses", "bacteria", "bacterium", "species"])


def _infection_of(vocabulary: MeshVocabulary, organism: MeshDescriptor) -> MeshDescriptor | None:
    """The infection heading named after an organism: a word of its name that is an
    infection's heading ("Mycobacterium tuberculosis" -> Tuberculosis), else "<word>
    Infections" ("Human Papillomavirus Viruses" -> Papillomavirus Infections)."""
    words = [
        w
        for w in normalize(organism.name.split(",")[0]).split()
        if w not in _ORGANISM_GENERIC and len(w) >= MIN_STEM
    ]
    for word in words:
        named = vocabulary.descriptor(word)
        if named is not None and any(n.startswith(_INFECTIONS) for n in named.tree_numbers):
            return named
    for word in words:
        infections = [
            d
            for d in vocabulary.named_with({word, "infection"})
            if any(n.startswith(_INFECTIONS) for n in d.tree_numbers)
        ]
        if infections:
            return min(infections, key=lambda d: (len(d.name), d.name))
    return None


def _organisms(
    vocabulary: MeshVocabulary, term: str, found: Sequence[HeadingMapping]
) -> list[HeadingMapping]:
    """For an infection's heading, the heading of the organism that causes it, and for an
    organism's, the infection named after it, as searchers OR the organism with the
    disease ("invasive aspergillosis" -> Aspergillosis and Aspergillus; "human
    papillomavirus" -> Human Papillomavirus Viruses and Papillomavirus Infections)."""
    added: list[HeadingMapping] = []
    have = {m.heading for m in found}
    for mapping in found:
        descriptor = vocabulary.descriptor(mapping.heading)
        if descriptor is None:
            continue
        if any(n.startswith(_ORGANISMS) for n in descriptor.tree_numbers):
            infection = _infection_of(vocabulary, descriptor)
            if infection is not None and infection.name not in have:
                have.add(infection.name)
                added.append(HeadingMapping(term, infection.name, "infection", mapping.heading))
            continue
        if not any(n.startswith(_INFECTIONS) for n in descriptor.tree_numbers):
            continue
        if _RESISTANT.search(descriptor.name):
            continue  # the organism is wider than its resistant form: MDR-TB is not all TB
        for word in normalize(descriptor.name.split(",")[0]).split():
            stem = _INFECTION_ENDING.sub("", word)
            if stem == word or len(stem) < MIN_STEM:
                continue
            candidates = vocabulary.named_with_prefix(stem, _ORGANISMS)
            if candidates and candidates[0].name not in have:
                have.add(candidates[0].name)
                added.append(HeadingMapping(term, candidates[0].name, "organism", mapping.heading))
            break
    return added


_PHENOMENA = "G"
_RESISTANT = re.compile(r"resistan", re.I)
_CHEMICALS = "D"


def _head_word(term: str) -> set[str]:
    """The concept's head noun (its last word), as ``_content_words`` spells it."""
    words = words_of(term)
    return _content_words(words[-1]) if words else set()


def _broader_headings(
    vocabulary: MeshVocabulary, term: str, found: Sequence[HeadingMapping]
) -> list[HeadingMapping]:
    """For a heading the concept met as a whole, the heading above it in the tree that
    names the concept's own words ("low back pain" -> Low Back Pain, and Back Pain above
    it), as a searcher explodes the broader heading."""
    wanted = _content_words(term)
    added: list[HeadingMapping] = []
    have = {m.heading for m in found}
    for mapping in found:
        if mapping.how in ("phrase part", "broader", "near spelling"):
            continue
        descriptor = vocabulary.descriptor(mapping.heading)
        # Above a resistant form is every case of the disease: MDR-TB is not all TB.
        if descriptor is None or _RESISTANT.search(descriptor.name):
            continue
        for parent in vocabulary.broader(descriptor):
            if parent.name in have or not _usable(parent) or not parent.tree_numbers:
                continue
            shared = _content_words(parent.name) & wanted
            if not shared:
                continue
            # A chemical class sharing only the head noun is another substance's family:
            # Cyclohexanecarboxylic Acids above Tranexamic Acid.
            chemical = all(n.startswith(_CHEMICALS) for n in parent.tree_numbers)
            if chemical and not shared - _head_word(term):
                continue
            # Above a phenomenon or process is another one, not a wider net for the same:
            # Drug Resistance above Insulin Resistance.
            if all(n.startswith(_PHENOMENA) for n in parent.tree_numbers):
                continue
            if min(n.count(".") for n in parent.tree_numbers) < 1:
                continue
            have.add(parent.name)
            added.append(HeadingMapping(term, parent.name, "broader", mapping.heading))
            break
    return added
