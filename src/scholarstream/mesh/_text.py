"""How a term is written down to be looked up: one normal form for MeSH's names and entry
terms (built into the package data by ``scripts/build_mesh.py``) and for a question's
words, and the word forms tried when a term as written finds nothing (US spelling, the
singular or plural of its last word).

An abbreviation keeps its capitals in the case-kept key, so "PET" never meets the entry
term "Pet" (of the heading Pets), while "PET scan" meets "PET Scan".
"""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^0-9A-Za-z]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_ASCII_PUNCTUATION = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def _plain(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_abbreviation_word(word: str) -> bool:
    """Two capitals or more ("PET", "MCI", "HbA1c", "CT"): written so on purpose."""
    return sum(c.isupper() for c in word) >= 2


def words_of(text: str) -> list[str]:
    """The words of a term, case kept, possessives and punctuation gone:
    "Alzheimer's disease" -> ["Alzheimer", "disease"]; "PET-CT" -> ["PET", "CT"]."""
    plain = _POSSESSIVE.sub("", _plain(text).replace("\u2019", "'"))
    return _NON_WORD.sub(" ", plain).split()


def normalize(text: str) -> str:
    """The lookup key: lower case, no accents, punctuation or possessives:
    "Alzheimer's Disease" -> "alzheimer disease"."""
    if text.isascii() and "'" not in text:
        return " ".join(text.lower().translate(_ASCII_PUNCTUATION).split())
    return " ".join(w.lower() for w in words_of(text))


def case_key(text: str) -> str:
    """The key with abbreviations in capitals: "PET Scan" -> "PET scan"."""
    return " ".join(w if is_abbreviation_word(w) else w.lower() for w in words_of(text))


def has_abbreviation(text: str) -> bool:
    return any(is_abbreviation_word(w) for w in words_of(text))


# --- US spelling ----------------------------------------------------------------------

# Words no general rule turns into MeSH's (US) spelling.
_US_WORDS = {
    "vulval": "vulvar",
    "grey": "gray",
    "programme": "program",
    "programmes": "programs",
    "aluminium": "aluminum",
    "mould": "mold",
    "moulds": "molds",
    "ageing": "aging",
    "licence": "license",
    "defence": "defense",
    "manoeuvre": "maneuver",
    "manoeuvres": "maneuvers",
}
_US_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # oesophagus, oedema, foetal, diarrhoea, coeliac, dyspnoea, oestrogen
    (re.compile(r"(?<=[a-z])oe(?=[a-z])|^oe(?=[a-z]{3})"), "e"),
    # haemorrhage, anaemia, paediatric, leukaemia, ischaemia, caesarean, aetiology
    (re.compile(r"(?<=[a-z])ae(?=[a-z])|^ae(?=t)"), "e"),
    # tumour, behaviour, colour, tumours, behavioural
    (re.compile(r"(?<=[a-z]{2}[^aeiou])our(?=s?$|al$|ed$|ing$)"), "or"),
    # randomised, hospitalisation, organise (not "disease", "noise": a consonant pair before)
    (re.compile(r"(?<=[a-z][aeiou][a-z])is(?=e$|es$|ed$|ing$|ation$|ations$)"), "iz"),
    (re.compile(r"(?<=[a-z])ys(?=e$|es$|ed$|ing$)"), "yz"),  # analyse, dialysed
    (re.compile(r"(?<=[a-z][^aeiou])(t|b)re(?=s?$)"), r"\1er"),  # centre, fibre, litre
    (re.compile(r"(?<=[a-z])ogue(?=s?$)"), "og"),  # analogue, catalogue
    (re.compile(r"^sulph"), "sulf"),  # sulphate, sulphonylurea
)


def us_word(word: str) -> str:
    """A lower-case word in US spelling, where British spelling differs."""
    if word in _US_WORDS:
        return _US_WORDS[word]
    for pattern, replacement in _US_RULES:
        word = pattern.sub(replacement, word)
    return word


def us_spelling(key: str) -> str:
    return " ".join(us_word(word) for word in key.split())


# The words MeSH uses where people use others ("breast cancer" -> "breast neoplasms",
# "endoscopic ultrasound" -> "endoscopic ultrasonography", "bile duct stones" -> "bile
# duct calculi"): tried after the US spelling.
_MESH_WORDS = {
    "cancer": "neoplasms",
    "cancers": "neoplasms",
    "tumor": "neoplasms",
    "tumors": "neoplasms",
    "malignancy": "neoplasms",
    "malignancies": "neoplasms",
    "ultrasound": "ultrasonography",
    "stones": "calculi",
    "stone": "calculi",
    "transplant": "transplantation",
    "transplants": "transplantation",
    # An organ's adjective where MeSH names the organ ("hepatic fibrosis" -> "liver
    # fibrosis", an entry term of Liver Cirrhosis; "renal colic" -> "kidney colic").
    "hepatic": "liver",
    "renal": "kidney",
    "gastric": "stomach",
    "pulmonary": "lung",
    "cardiac": "heart",
    "cerebral": "brain",
    "ocular": "eye",
    "cutaneous": "skin",
    "dental": "tooth",
}


# Standard abbreviations of tests, imaging and markers that MeSH lists no entry term for
# in capitals (so "PET" alone would meet Pets): looked up spelled out.
ABBREVIATIONS = {
    "PET": "positron emission tomography",
    "CT": "computed tomography",
    "MRI": "magnetic resonance imaging",
    "SPECT": "single photon emission computed tomography",
    "EUS": "endoscopic ultrasonography",
    "OCT": "optical coherence tomography",
    "PCR": "polymerase chain reaction",
    "ECG": "electrocardiography",
    "EKG": "electrocardiography",
    "EEG": "electroencephalography",
    "CSF": "cerebrospinal fluid",
    "HPV": "human papillomavirus",
    "MTB": "mycobacterium tuberculosis",
    "ELISA": "enzyme-linked immunosorbent assay",
    "FNA": "fine-needle aspiration biopsy",
    "CEA": "carcinoembryonic antigen",
    "PSA": "prostate-specific antigen",
    "CRP": "C-reactive protein",
    "ESR": "erythrocyte sedimentation rate",
    "AFP": "alpha-fetoproteins",
    "BNP": "brain natriuretic peptide",
}


def spelled_out(term: str) -> str | None:
    """The term with its known abbreviations spelled out, ``None`` when it has none."""
    words = words_of(term)
    if not any(w in ABBREVIATIONS for w in words):
        return None
    return " ".join(ABBREVIATIONS.get(w, w) for w in words)


def mesh_wording(key: str) -> str:
    """The key (US spelling) in MeSH's own words."""
    return " ".join(_MESH_WORDS.get(word, word) for word in key.split())


# --- singular and plural ------------------------------------------------------------------

_IRREGULAR_PLURALS = {
    "children": "child",
    "women": "woman",
    "men": "man",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "people": "person",
    "diagnoses": "diagnosis",
    "metastases": "metastasis",
    "analyses": "analysis",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "bacteria": "bacterium",
    "fungi": "fungus",
    "nuclei": "nucleus",
    "vertebrae": "vertebra",
    "larvae": "larva",
    "indices": "index",
    "appendices": "appendix",
    "matrices": "matrix",
    "cortices": "cortex",
    "stomata": "stoma",
    "carcinomata": "carcinoma",
}
# Endings of words that are singular although they end in s.
_SINGULAR_ENDINGS = ("ss", "us", "is", "ous", "sis", "xis", "ics", "ias", "ies", "os", "as", "ys")
_KEEP_WORDS = frozenset({"diabetes", "herpes", "series", "species", "rabies", "scabies", "lens"})


def singular_word(word: str) -> str | None:
    """The singular of a plural lower-case word, ``None`` when it does not read as one
    (short words, Latin and Greek singulars in -is/-us/-sis, "diabetes", "series")."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if len(word) <= 3 or word in _KEEP_WORDS or not word.endswith("s") or word[-2].isdigit():
        return None
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith(_SINGULAR_ENDINGS):
        return None
    return word[:-1]


def plural_word(word: str) -> str | None:
    """The regular plural of a singular lower-case word (``None`` for short words)."""
    if len(word) <= 3 or word[-1].isdigit() or singular_word(word) is not None:
        return None
    if word.endswith(("s", "x", "ch", "sh")):
        return None if word.endswith(("us", "is")) else word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def number_variants(key: str) -> list[str]:
    """The key with its last word made singular, or plural: "breast neoplasm" ->
    ["breast neoplasms"]. Words are lower case here: abbreviations never get here."""
    *head, last = key.split()
    found = [singular_word(last), plural_word(last)]
    return [" ".join([*head, w]) for w in found if w]


def natural_orders(name: str) -> list[str]:
    """Natural word orders of an inverted heading or entry term: its parts reversed
    ("Leukemia, Myeloid, Acute" -> "Acute Myeloid Leukemia") and its head moved last
    ("Diabetes Mellitus, Type 2" -> "Type 2 Diabetes Mellitus")."""
    parts = [p.strip() for p in name.split(", ") if p.strip()]
    if len(parts) < 2:
        return []
    return list(dict.fromkeys((" ".join(reversed(parts)), " ".join([*parts[1:], parts[0]]))))
