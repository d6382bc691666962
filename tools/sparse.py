"""BM25 sparse vectors from fastembed's Bm25 (Snowball stemming), computed offline; IDF is applied at search."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic.lexical import STOPWORDS

if TYPE_CHECKING:  # langchain_qdrant imports qdrant_client, most of a cold start: only ingest and a server need it
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
_TOKEN_MAX_LENGTH = 40  # fastembed Bm25's default: longer tokens are dropped
_STOPWORDS = frozenset(w.lower() for w in STOPWORDS)
_cache: dict[float, FastEmbedSparse] = {}
_lock = threading.Lock()


def encoder(average_length: float = DEFAULT_AVERAGE_LENGTH) -> FastEmbedSparse:
    """Return the process's BM25 encoder for a corpus whose chunks average `average_length` terms."""
    from langchain_qdrant import FastEmbedSparse

    with _lock:
        if average_length not in _cache:
            _cache[average_length] = FastEmbedSparse(model_name=MODEL, avg_len=average_length, **_OPTIONS)
        return _cache[average_length]


def query_terms(text: str) -> list[int]:
    """Return the BM25 term ids of a query, as fastembed's Bm25.query_embed computes them.

    Importing fastembed costs 0.2-0.6 s of a cold `rag-agent ask` (it loads its image and hub modules),
    so a query is tokenised here with the same steps, Snowball stemmer and hash as its Bm25;
    tests/unit/test_sparse.py checks the ids equal fastembed's on every textbook sentence.
    """
    import mmh3

    stemmer = _snowball()
    # Bm25: remove_non_alphanumeric, then SimpleTokenizer (lowercase, split on non-word characters).
    tokens = re.sub(r"[^\w]", " ", re.sub(r"[^\w\s]", " ", text).lower()).split()
    terms = {stemmer.stem_word(t) for t in tokens
             if t not in _STOPWORDS and len(t) <= _TOKEN_MAX_LENGTH and not _punctuation(t)}
    return sorted({abs(mmh3.hash(t)) for t in terms if t})


@lru_cache(maxsize=1)
def _snowball() -> Any:
    """Return the English Snowball stemmer fastembed's Bm25 uses."""
    from py_rust_stemmers import SnowballStemmer

    return SnowballStemmer("english")


def _punctuation(token: str) -> bool:
    """Return whether a token is one punctuation character: Bm25 skips a lone "_" (word-class, yet punctuation)."""
    return len(token) == 1 and unicodedata.category(token).startswith("P")


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
