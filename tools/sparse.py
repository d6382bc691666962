"""BM25 sparse vectors from fastembed's Bm25 (Snowball stemming), computed offline; IDF is applied at search."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic.lexical import STOPWORDS

if TYPE_CHECKING:  # langchain_qdrant imports qdrant_client, most of a cold start: only ingest and a server need it
    from fastembed import SparseTextEmbedding
    from langchain_qdrant import FastEmbedSparse

MODEL = "Qdrant/bm25"
# Recorded in the manifest: sparse vectors written by another encoder (the hand-written crc32 one of
# earlier versions) hash terms differently, so a query encoded here would match nothing in them.
ENCODING = "fastembed-bm25"
DEFAULT_AVERAGE_LENGTH = 100.0
# Bm25 has no weights; its "model" folder only holds optional stopword files. Pointing it at a folder
# without them (this package's) means no hub download, and the stopwords are passed inline instead.
_NO_DOWNLOAD = str(Path(__file__).parent)
_OPTIONS: dict[str, Any] = {"specific_model_path": _NO_DOWNLOAD, "stopwords": set(STOPWORDS), "language": "english"}
_cache: dict[float, FastEmbedSparse] = {}
_query_model: list[SparseTextEmbedding] = []
_lock = threading.Lock()


def encoder(average_length: float = DEFAULT_AVERAGE_LENGTH) -> FastEmbedSparse:
    """Return the process's BM25 encoder for a corpus whose chunks average `average_length` terms."""
    from langchain_qdrant import FastEmbedSparse

    with _lock:
        if average_length not in _cache:
            _cache[average_length] = FastEmbedSparse(model_name=MODEL, avg_len=average_length, **_OPTIONS)
        return _cache[average_length]


def query_terms(text: str) -> list[int]:
    """Return the BM25 term ids of a query, as encoder().embed_query would, without importing qdrant_client."""
    from fastembed import SparseTextEmbedding

    with _lock:
        if not _query_model:  # a query's terms all weigh 1: the corpus's average length plays no part
            _query_model.append(SparseTextEmbedding(model_name=MODEL, **_OPTIONS))
        model = _query_model[0]
    return [int(i) for i in next(iter(model.query_embed(text))).indices]


def _model(sparse: FastEmbedSparse) -> Any:
    """Return fastembed's Bm25 behind the LangChain wrapper (it tokenises and stems)."""
    return sparse._model.model


def length(sparse: FastEmbedSparse, text: str) -> int:
    """Return how many terms BM25 counts in `text` (after stopwords, stemmed): its document length."""
    from fastembed.common.utils import remove_non_alphanumeric

    bm25 = _model(sparse)
    return len(bm25._stem(bm25.tokenizer.tokenize(remove_non_alphanumeric(text))))


def average_length(texts: Iterable[str]) -> float:
    """Return the mean BM25 length of the texts (at least 1), the length BM25 normalises against."""
    sparse = encoder()
    lengths = [length(sparse, t) for t in texts]
    return max(sum(lengths) / len(lengths), 1.0) if lengths else 1.0
