"""What ranking needs of a text-embedding model, whatever runs it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length vectors; cosine similarity is their dot product."""

    @property
    def name(self) -> str:
        """Stored beside every vector: vectors of two models are never compared."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One row per text, ``(len(texts), dimension)``."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """One vector, ``(dimension,)``; models that mark queries apart do so here."""
        ...


def unit_rows(vectors: npt.NDArray[np.floating]) -> Vectors:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    unit: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def pack(vector: Vectors) -> bytes:
    """float16 halves the stored size; rankings are unchanged at that precision."""
    return vector.astype(np.float16).tobytes()


def unpack_rows(blobs: Sequence[bytes], dimension: int) -> Vectors:
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float32)
    return (
        np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(-1, dimension).astype(np.float32)
    )
