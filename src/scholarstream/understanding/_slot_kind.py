"""The kinds of value a question's slots hold."""

from typing import Literal

SlotKind = Literal[
    "intervention",
    "comparator",
    "condition",
    "population",
    "place",
    "organisation",
    "phase",
    "topic",
    "aspect",
    "study_type",
    "language",
    "source",
]
