"""MeSH for the search: the vocabulary and the concept mapping live in ``scholarstream.mesh``
(the MeSH that ships with the package, or the file ``search.mesh_file`` names)."""

from __future__ import annotations

from scholarstream.mesh import (
    ConceptMapping,
    HeadingMapping,
    MeshDescriptor,
    MeshMatch,
    MeshVocabulary,
    map_concept,
)

__all__ = [
    "ConceptMapping",
    "HeadingMapping",
    "MeshDescriptor",
    "MeshMatch",
    "MeshVocabulary",
    "map_concept",
]
