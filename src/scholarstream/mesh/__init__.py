"""MeSH, the National Library of Medicine's Medical Subject Headings, shipped with the
package (``data/mesh.tsv.gz``, built by ``scripts/build_mesh.py``; see ``data/NOTICE``):
descriptors with their entry terms and tree numbers (``MeshVocabulary``), and the mapping
of a question's concepts to headings (``map_concept``): by entry term, in US spelling,
by a part of a phrase that has no heading of its own, or by a broader heading of the tree.

Pure: no database, engine, HTTP or model. The data is read on the first lookup.
"""

from scholarstream.mesh._build import FORMAT, MAX_TERM_LENGTH, MeshRecord, MeshRow, build_rows
from scholarstream.mesh._mapping import (
    GENERIC_HEADINGS,
    ConceptMapping,
    HeadingMapping,
    MappingKind,
    map_concept,
    preferred_match,
)
from scholarstream.mesh._text import (
    case_key,
    has_abbreviation,
    natural_orders,
    normalize,
    singular_word,
    us_spelling,
)
from scholarstream.mesh._vocabulary import (
    MatchKind,
    MeshDescriptor,
    MeshMatch,
    MeshVocabulary,
    packaged_file,
)

__all__ = [
    "FORMAT",
    "GENERIC_HEADINGS",
    "MAX_TERM_LENGTH",
    "ConceptMapping",
    "HeadingMapping",
    "MappingKind",
    "MatchKind",
    "MeshDescriptor",
    "MeshMatch",
    "MeshRecord",
    "MeshRow",
    "MeshVocabulary",
    "build_rows",
    "case_key",
    "has_abbreviation",
    "map_concept",
    "natural_orders",
    "normalize",
    "packaged_file",
    "preferred_match",
    "singular_word",
    "us_spelling",
]
