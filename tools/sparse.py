"""BM25 sparse vectors computed offline: term frequencies saturated here, IDF applied by Qdrant."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable

from langchain_qdrant import SparseEmbeddings, SparseVector

from logic.lexical import terms

# The usual BM25 constants: k1 caps how much repeating a term helps, b how much long chunks are damped.
K1 = 1.2
B = 0.75


def index_of(term: str) -> int:
    """Map a term to a stable unsigned 32-bit index, the same in every process and Python version."""
    # crc32 rather than hash(): str hashes are salted per process. Collisions are rare (about 1%
    # chance of any at all for a 10k-term vocabulary) and only merge two terms' weights.
    return zlib.crc32(term.encode("utf-8"))


def _vector(weights: Counter[int]) -> SparseVector:
    """Build a sparse vector with sorted unique indices."""
    indices = sorted(weights)
    return SparseVector(indices=indices, values=[float(weights[i]) for i in indices])


def average_length(texts: Iterable[str]) -> float:
    """Return the mean number of terms per text (at least 1), the length BM25 normalises against."""
    lengths = [len(terms(t)) for t in texts]
    return max(sum(lengths) / len(lengths), 1.0) if lengths else 1.0


class BM25Encoder(SparseEmbeddings):
    """BM25 term weights for chunks and unit weights for queries; the collection's IDF modifier does the rest."""

    def __init__(self, average_length: float = 100.0, k1: float = K1, b: float = B) -> None:
        """Remember the corpus's average chunk length (in terms) and the BM25 constants."""
        self.average_length, self.k1, self.b = average_length, k1, b

    def embed_document(self, text: str) -> SparseVector:
        """Weigh each term by BM25's saturated term frequency, normalised by the chunk's length."""
        words = terms(text)
        norm = self.k1 * (1 - self.b + self.b * len(words) / self.average_length)
        counts: Counter[int] = Counter()
        for term, tf in Counter(words).items():
            counts[index_of(term)] += tf  # two terms sharing an index count as one
        return _vector(Counter({i: tf * (self.k1 + 1) / (tf + norm) for i, tf in counts.items()}))

    def embed_documents(self, texts: list[str]) -> list[SparseVector]:
        """Encode chunks for storage."""
        return [self.embed_document(t) for t in texts]

    def embed_query(self, text: str) -> SparseVector:
        """Give each distinct query term weight 1, so a chunk's score is the sum of BM25 weight × IDF."""
        return _vector(Counter(dict.fromkeys((index_of(t) for t in terms(text)), 1)))
