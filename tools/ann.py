"""The embedded index's approximate nearest-neighbour graph: a usearch HNSW file, built at export, served as a view.

Brute force reads every vector on every query (82 ms at 1M chunks). The graph is built once when
ingest exports a snapshot and saved beside the vectors; readers open it with `view=True`, a memory map,
so opening costs milliseconds and every process answering questions shares the same pages. The graph
holds int8 copies of the vectors: it only proposes candidates, which search rescores with the exact
float vectors, so the quantization costs no ranking accuracy among the candidates.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # usearch loads only where a snapshot has a graph: small indexes never import it
    from usearch.index import Index

FILE = "vectors.usearch"
# Below this many chunks exact search costs about a millisecond and needs no graph.
MIN_ROWS = 20_000
# Candidates the graph proposes per query, and the breadth of its search: measured with exact
# rescoring at recall@10 >= 0.99 against exact search on real questions (tests/integration/test_ann_recall.py).
CANDIDATES = 100
EXPANSION_SEARCH = 256
# Build breadth and links per node: with usearch's default 16 links, or 32 links and 64 candidates
# while building, a few close neighbours were missed (recall@10 0.90, 0.97) where many synthetic
# chunks blend a few real ones; 32 links and 128 candidates found them all.
EXPANSION_ADD = 128
CONNECTIVITY = 32
_BATCH = 50_000
# Build threads (0: every core). A graph built on several threads differs from run to run; on one, never.
THREADS = 0


def build(vectors: np.ndarray[Any, Any], path: Path) -> None:
    """Build the graph of these unit vectors (row i is key i) and save it to `path`, in batches of rows."""
    from usearch.index import Index

    index = Index(ndim=int(vectors.shape[1]), metric="cos", dtype="i8", connectivity=CONNECTIVITY,
                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
    for first in range(0, int(vectors.shape[0]), _BATCH):  # batches: a memory-mapped input stays mapped
        chunk = np.ascontiguousarray(vectors[first:first + _BATCH], dtype=np.float32)
        index.add(np.arange(first, first + len(chunk), dtype=np.uint64), chunk, threads=THREADS, log=False)
    index.save(str(path))


def view(path: Path) -> Index | None:
    """Open a saved graph as a read-only memory map, or return None when the snapshot has none."""
    if not path.exists():
        return None
    from usearch.index import Index

    # Search never looks a key up (rows are keys), so the key-to-slot table, a hash of every row built at every
    # opening (10 of the 14 ms it took to open 100k chunks), is not built: 4 ms.
    index = Index.restore(str(path), view=True, enable_key_lookups=False)
    if index is None:
        return None
    index.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # it has a setter mypy misses
    return index


def candidates(index: Index, query: np.ndarray[Any, Any], count: int) -> np.ndarray[Any, Any]:
    """Return the rows of about `count` approximate nearest neighbours of the query (unordered)."""
    keys: np.ndarray[Any, Any] = index.search(query, count).keys
    return keys.astype(np.int64)
