"""Dense text embeddings for ranking by meaning: the model interface, the model that ships
with ScholarStream, and how vectors are stored."""

from scholarstream.embeddings._embedder import Embedder, Vectors, pack, unit_rows, unpack_rows
from scholarstream.embeddings._minilm import MiniLMEmbedder, shipped_embedder

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "Vectors",
    "pack",
    "shipped_embedder",
    "unit_rows",
    "unpack_rows",
]
