"""The words offline parsing knows for common biomedical and computing ideas, and the
abbreviations a question defines itself ("glycated haemoglobin (HbA1c)").

The table is deliberately small: equivalent wordings and standard abbreviations only,
so a concept's OR-group never drifts from what the user asked. ``related`` terms are
broader or neighbouring ideas; the query builder adds them only when asked to broaden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SynonymGroup:
    preferred: str
    synonyms: tuple[str, ...]
    related: tuple[str, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        return (self.preferred, *self.synonyms)


def _group(preferred: str, *synonyms: str, related: tuple[str, ...] = ()) -> SynonymGroup:
    return SynonymGroup(preferred, synonyms, related)


GROUPS: tuple[SynonymGroup, ...] = (
    # conditions
    _group(
        "type 2 diabetes",
        "type 2 diabetes mellitus",
        "T2D",
        "T2DM",
        "non-insulin-dependent diabetes",
        related=("diabetes mellitus",),
    ),
    _group("type 1 diabetes", "type 1 diabetes mellitus", "T1D", "T1DM", related=("diabetes",)),
    _group("diabetes", "diabetes mellitus", "diabetic"),
    _group("myocardial infarction", "heart attack", "MI", related=("acute coronary syndrome",)),
    _group("heart failure", "cardiac failure", "HF", related=("cardiomyopathy",)),
    _group(
        "heart failure with preserved ejection fraction",
        "HFpEF",
        "diastolic heart failure",
        related=("heart failure",),
    ),
    _group(
        "heart failure with reduced ejection fraction",
        "HFrEF",
        "systolic heart failure",
        related=("heart failure",),
    ),
    _group("atrial fibrillation", "AF", "AFib", "a-fib"),
    _group("traumatic brain injury", "TBI", related=("concussion",)),
    _group("obstructive sleep apnea", "OSA", "obstructive sleep apnoea"),
    _group("urinary tract infection", "UTI", "UTIs"),
    _group("deep vein thrombosis", "DVT", related=("venous thromboembolism",)),
    _group("acute kidney injury", "AKI"),
    _group("acute respiratory distress syndrome", "ARDS"),
    _group("systemic lupus erythematosus", "SLE", "lupus"),
    _group("benign prostatic hyperplasia", "BPH"),
    _group("amyotrophic lateral sclerosis", "ALS", "motor neuron disease"),
    _group("hypertension", "high blood pressure", "HTN", related=("blood pressure",)),
    _group("stroke", "cerebrovascular accident", "CVA", related=("cerebrovascular disease",)),
    _group("chronic obstructive pulmonary disease", "COPD", related=("emphysema",)),
    _group("chronic kidney disease", "CKD", related=("renal insufficiency",)),
    _group("COVID-19", "SARS-CoV-2 infection", "coronavirus disease 2019", related=("SARS-CoV-2",)),
    _group("HIV", "human immunodeficiency virus", related=("AIDS",)),
    _group("tuberculosis", "TB"),
    _group("cancer", "neoplasm", "tumor", "tumour", "malignancy", related=("carcinoma",)),
    _group("breast cancer", "breast neoplasm", "breast carcinoma"),
    _group("non-small cell lung cancer", "non-small-cell lung carcinoma", "NSCLC"),
    _group("hepatocellular carcinoma", "HCC", "liver cell carcinoma"),
    _group("acute myeloid leukemia", "AML", "acute myeloid leukaemia"),
    _group("chronic lymphocytic leukemia", "CLL", "chronic lymphocytic leukaemia"),
    _group("diffuse large B-cell lymphoma", "DLBCL"),
    _group("depression", "depressive disorder", "major depressive disorder", "MDD"),
    _group("Alzheimer's disease", "Alzheimer disease", related=("dementia",)),
    _group("post-traumatic stress disorder", "PTSD", "posttraumatic stress disorder"),
    _group("attention deficit hyperactivity disorder", "ADHD"),
    _group("inflammatory bowel disease", "IBD", related=("Crohn disease", "ulcerative colitis")),
    _group("sepsis", "septicemia", related=("septic shock",)),
    _group("obesity", "obese", related=("overweight",)),
    # interventions and exposures
    _group(
        "SGLT2 inhibitors",
        "sodium-glucose cotransporter 2 inhibitors",
        "gliflozins",
    ),
    _group(
        "GLP-1 receptor agonists",
        "glucagon-like peptide-1 receptor agonists",
        "GLP-1 RA",
    ),
    _group("exercise", "physical activity", "physical exercise", related=("physical fitness",)),
    _group("smoking", "tobacco use", "cigarette smoking"),
    _group("cognitive behavioral therapy", "cognitive behavioural therapy", "CBT"),
    # outcomes and measures
    _group("HbA1c", "glycated hemoglobin", "hemoglobin A1c", "glycated haemoglobin"),
    _group("mortality", "death", "all-cause mortality", related=("survival",)),
    _group("quality of life", "QoL", "health-related quality of life", "HRQoL"),
    _group("body mass index", "BMI"),
    _group("blood pressure", "BP"),
    # populations and settings
    _group("children", "child", "kids", "paediatric", "pediatric", related=("adolescents",)),
    _group(
        "CAR-T cell therapy",
        "CAR-T",
        "CAR T-cell therapy",
        "chimeric antigen receptor T-cell therapy",
        "chimeric antigen receptor",
    ),
    _group("shift work", "shift workers", "night shift work"),
    _group("young adults", "young adult", "young people"),
    _group("older adults", "elderly", related=("older people",)),  # not "aged 18 to 65"
    _group("intensive care unit", "ICU", "critical care"),
    _group("electronic health records", "EHR", "electronic medical records", "EMR"),
    # computing
    _group("artificial intelligence", "AI", related=("machine learning",)),
    _group(
        "machine learning",
        "ML",
        related=("artificial intelligence", "deep learning", "statistical learning"),
    ),
    _group("deep learning", "deep neural networks", related=("neural networks",)),
    _group("natural language processing", "NLP", related=("text mining",)),
    _group("large language models", "LLM", "LLMs", related=("generative AI",)),
    _group("convolutional neural networks", "CNN", "CNNs"),
)


def _key(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").lower().split())


_BY_TERM: dict[str, SynonymGroup] = {}
for _g in GROUPS:
    for _member in _g.members:
        _BY_TERM.setdefault(_key(_member), _g)


def group_of(term: str) -> SynonymGroup | None:
    """The group a term belongs to (case-insensitive), if the table knows it."""
    return _BY_TERM.get(_key(term))


def known_phrases() -> list[str]:
    """Every multi-word member, longest first: phrases the parser keeps whole."""
    phrases = {m for g in GROUPS for m in g.members if " " in m or "-" in m}
    return sorted(phrases, key=lambda p: (-len(p.split()), -len(p)))


def is_abbreviation(term: str) -> bool:
    """Short, capitalised, often with digits: "T2DM", "COPD", "HbA1c", "GLP-1 RA"."""
    compact = term.replace("-", "").replace(" ", "")
    capitals = sum(c.isupper() for c in compact)
    return 1 < len(compact) <= 6 and capitals >= 2 and capitals >= len(compact) // 2


@dataclass
class Abbreviations:
    """The abbreviations a text defines in parentheses, long form -> short form."""

    long_to_short: dict[str, str] = field(default_factory=dict)

    def short_for(self, long_form: str) -> str | None:
        return self.long_to_short.get(_key(long_form))

    def long_for(self, short: str) -> str | None:
        for long_form, abbreviation in self.long_to_short.items():
            if abbreviation.lower() == short.lower():
                return long_form
        return None


_DEFINITION = re.compile(r"\(\s*([A-Za-z][A-Za-z0-9\-]{0,9}[A-Za-z0-9])\s*\)")
_WORD = re.compile(r"[\w'\u2019\-]+")


def _long_form(before: str, short: str) -> str | None:
    """Schwartz & Hearst (2003): the shortest run of preceding words in which the
    abbreviation's letters appear in order, its first letter starting a word."""
    words = _WORD.findall(before)
    # Digits rarely appear in the long form ("HbA1c"), so only letters are matched.
    letters = [c.lower() for c in short if c.isalpha()]
    if not letters or not words:
        return None
    window = words[-min(len(letters) + 5, len(letters) * 2) :]
    text = " ".join(window).lower()
    position = len(text) - 1
    for index in range(len(letters) - 1, -1, -1):
        letter = letters[index]
        while position >= 0 and (
            text[position] != letter
            or (index == 0 and position > 0 and text[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return None
        position -= 1
    start = text.rfind(" ", 0, position + 1) + 1
    long_words = text[start:].split()
    if len(long_words) < 2 and len(letters) > 2:
        return None
    return " ".join(window[len(window) - len(long_words) :])


def _known_long_form(before: str, short: str) -> str | None:
    """The table's own long form when the text ends with it ("glycated haemoglobin (HbA1c)")."""
    group = group_of(short)
    if group is None:
        return None
    ending = _key(before)
    for member in sorted(group.members, key=len, reverse=True):
        if _key(member) != _key(short) and ending.endswith(_key(member)):
            return before.rstrip()[-len(member) :]
    return None


def find_abbreviations(text: str) -> tuple[str, Abbreviations]:
    """The text without its "(ABBR)" definitions, and the abbreviations they define."""
    found = Abbreviations()
    kept: list[str] = []
    cursor = 0
    for match in _DEFINITION.finditer(text):
        short = match.group(1)
        before = text[cursor : match.start()]
        long_form = None
        if is_abbreviation(short):
            long_form = _long_form(before, short) or _known_long_form(before, short)
        kept.append(before)
        if long_form is None:
            kept.append(match.group(0))
        else:
            found.long_to_short[_key(long_form)] = short
        cursor = match.end()
    kept.append(text[cursor:])
    return " ".join("".join(kept).split()), found
