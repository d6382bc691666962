"""The embedded index's read side: memory-mapped vectors and a BM25 inverted index, searched in-process.

Ingest writes each snapshot, a folder of numpy files (tools/embedded_export.py merges the current one
with its write log), and publishes it whole; every process that answers questions reads the current
folder, so any number of them can share one index, opening it costs milliseconds (nothing is parsed
but a list of sources), and search reads an ANN graph (tools/ann.py) or one matrix-vector product.
"""

from __future__ import annotations

import json
import math
import mmap
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document

from logic.fusion import reciprocal_rank_fusion
from tools import ann, sentence_store

FOLDER = "embedded"
CURRENT = "CURRENT"
# Metadata key under which search returns a hit's stored dense vector (unit length).
VECTOR_KEY = "_vector"
_lock = threading.Lock()


def root(data_dir: str | Path, collection: str) -> Path:
    """Return the folder holding a collection's exported snapshots and the CURRENT pointer."""
    return Path(data_dir) / FOLDER / collection


def _array(folder: Path, name: str) -> np.ndarray[Any, Any]:
    """Memory-map one array: opening costs a header read, pages load as search touches them."""
    array: np.ndarray[Any, Any] = np.load(folder / f"{name}.npy", mmap_mode="r")
    return array


@dataclass
class Snapshot:
    """One exported version of a collection, opened read-only."""

    folder: Path
    vectors: np.ndarray[Any, Any]  # (rows, dimension) float32 unit vectors
    offsets: np.ndarray[Any, Any]  # (rows + 1,) byte offsets of each row's payload line
    source_ids: np.ndarray[Any, Any]  # (rows,) index into `sources`
    sources: list[str]
    hybrid: bool
    terms: np.ndarray[Any, Any] | None = None  # sorted BM25 term ids
    starts: np.ndarray[Any, Any] | None = None  # postings of terms[i] are docs/weights[starts[i]:starts[i+1]]
    docs: np.ndarray[Any, Any] | None = None
    weights: np.ndarray[Any, Any] | None = None
    ann: Any = None  # the usearch graph (tools/ann.py) of a snapshot exported with one; None: exact search
    _payloads: mmap.mmap | None = None
    _headings: list[list[str]] | None = field(default=None, repr=False)
    _source_ids_by_name: dict[str, int] | None = field(default=None, repr=False)
    _by_source: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None = field(default=None, repr=False)
    _passages: dict[str, sentence_store.Store | None] = field(default_factory=dict, repr=False)

    @property
    def rows(self) -> int:
        """Return the number of chunks."""
        return int(self.vectors.shape[0])

    def document(self, row: int) -> Document:
        """Read one chunk's stored payload as the Document the LangChain store would return."""
        assert self._payloads is not None, "a snapshot with rows has its payloads mapped"
        raw = json.loads(self._payloads[int(self.offsets[row]):int(self.offsets[row + 1])])
        return Document(page_content=raw["page_content"], metadata={**raw["metadata"], "_id": raw["id"]})

    def find(self, point_id: str) -> Document | None:
        """Return the stored chunk with this point id (a UUID), or None when the index has no such chunk."""
        if self._payloads is None or not re.fullmatch(r"[0-9a-f-]{36}", point_id):
            return None
        at = self._payloads.find(b'{"id": "' + point_id.encode() + b'", ')  # each payload line starts so
        if at < 0:
            return None
        row = int(np.searchsorted(self.offsets, at, side="right")) - 1
        if row < 0 or row >= self.rows or int(self.offsets[row]) != at:
            return None
        return self.document(row)

    def chunk(self, source: str, index: int) -> Document | None:
        """Return a page's chunk by its place on the page (None: the page has no such chunk)."""
        rows = self.rows_of([source]).tolist()
        # Ingest writes a page's chunks in order, so its index-th row is nearly always the one; else look at each.
        guess = [rows[index]] if 0 <= index < len(rows) else []
        return next((doc for r in [*guess, *rows] if (doc := self.document(r)).metadata.get("chunk_index") == index),
                    None)

    def allowed(self, sources: list[str] | None, headings: list[str] | None) -> np.ndarray[Any, Any] | None:
        """Return which rows a filter admits as a mask (None: every row)."""
        rows = self.admitted(sources, headings)
        if rows is None:
            return None
        mask = np.zeros(self.rows, dtype=bool)
        mask[rows] = True
        return mask

    def admitted(self, sources: list[str] | None, headings: list[str] | None) -> np.ndarray[Any, Any] | None:
        """Return the sorted rows a filter admits (None: every row)."""
        if sources is None and not headings:
            return None
        rows = np.arange(self.rows) if sources is None else self.rows_of(sources)
        if headings:
            if self._headings is None:  # only section filters need them: loaded on first use
                self._headings = json.loads((self.folder / "headings.json").read_text())
            chosen = set(headings)
            rows = rows[[not chosen.isdisjoint(self._headings[r]) for r in rows.tolist()]]
        return rows

    def rows_of(self, sources: list[str]) -> np.ndarray[Any, Any]:
        """Return the sorted rows of these sources: one dict lookup per name, then their slices of the source map."""
        if self._source_ids_by_name is None:  # built once per snapshot, on its first filtered search
            self._source_ids_by_name = {s: i for i, s in enumerate(self.sources)}
        if self._by_source is None:
            self._by_source = source_map(self.folder, self.source_ids, len(self.sources))
        known, (order, starts) = self._source_ids_by_name, self._by_source
        ids = [known[s] for s in set(sources) if s in known]
        if not ids:
            return np.zeros(0, dtype=np.int64)
        if len(ids) > 64:  # many pages: one vectorised pass over the rows beats a slice per page
            wanted = np.zeros(len(self.sources), dtype=bool)
            wanted[ids] = True
            return np.flatnonzero(wanted[self.source_ids])
        rows = np.concatenate([order[starts[i]:starts[i + 1]] for i in ids]).astype(np.int64)
        rows.sort()
        return rows

    def passage_vectors(self, model: str) -> sentence_store.Store | None:
        """Return the extractive answerer's passage vectors ingest stored for `model` (None: none stored)."""
        if model not in self._passages:  # opened on the first offline answer: a header read per file
            self._passages[model] = sentence_store.open_store(self.folder, model)
        return self._passages[model]

    def keyword_scores(self, query_terms: list[int]) -> np.ndarray[Any, Any]:
        """Score every row by BM25: the stored saturated term frequencies times Qdrant's IDF."""
        scores = np.zeros(self.rows, dtype=np.float32)
        if self.terms is None or self.starts is None or self.docs is None or self.weights is None:
            return scores
        for term in set(query_terms):
            at = int(np.searchsorted(self.terms, term))
            if at >= len(self.terms) or int(self.terms[at]) != term:
                continue
            start, end = int(self.starts[at]), int(self.starts[at + 1])
            df = end - start
            # The IDF Qdrant's Modifier.IDF applies on a server, so both paths rank alike.
            idf = math.log((self.rows - df + 0.5) / (df + 0.5) + 1)
            scores[self.docs[start:end]] += np.float32(idf) * self.weights[start:end]
        return scores


def source_map(folder: Path, source_ids: np.ndarray[Any, Any],
               sources: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Return (rows grouped by source, where each source's group starts): exported, or sorted for an old snapshot."""
    if (folder / "source_rows.npy").exists():
        return _array(folder, "source_rows"), _array(folder, "source_starts")
    order = np.argsort(source_ids, kind="stable")
    starts = np.searchsorted(source_ids[order], np.arange(sources + 1))
    return order, starts


def load(folder: Path) -> Snapshot:
    """Open an exported snapshot folder."""
    meta = json.loads((folder / "meta.json").read_text())
    snap = Snapshot(folder, _array(folder, "vectors"), _array(folder, "offsets"), _array(folder, "source_ids"),
                    list(meta["sources"]), bool(meta["hybrid"]))
    if snap.rows:
        with open(folder / "payloads.jsonl", "rb") as handle:
            snap._payloads = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    snap.ann = ann.view(folder / ann.FILE) if snap.rows else None  # an older snapshot has none: exact search
    if snap.hybrid:
        snap.terms, snap.starts = _array(folder, "terms"), _array(folder, "starts")
        snap.docs, snap.weights = _array(folder, "docs"), _array(folder, "weights")
    return snap


_open: dict[Path, tuple[str, Snapshot]] = {}


def current(data_dir: str | Path, collection: str) -> Snapshot | None:
    """Return the collection's latest complete snapshot (reopened only when ingest swaps it), or None."""
    base = root(data_dir, collection).resolve()
    try:
        name = (base / CURRENT).read_text().strip()
    except FileNotFoundError:
        return None
    with _lock:
        cached = _open.get(base)
        if cached is None or cached[0] != name:
            _open[base] = (name, load(base / name))
        return _open[base][1]


def passage_vectors(data_dir: str | Path, collection: str, model: str) -> sentence_store.Store | None:
    """Return the current snapshot's passage vectors for `model`, or None (no snapshot, none stored, unreadable)."""
    try:
        snap = current(data_dir, collection)
        return snap.passage_vectors(model) if snap is not None else None
    except (OSError, ValueError, KeyError):  # a damaged store costs speed (passages embedded per turn), not answers
        return None


# A filter admitting at most this many rows is searched exactly over just those rows: cheaper than
# the graph's candidates, and exact.
EXACT_ROWS = 20_000


def _top(scores: np.ndarray[Any, Any], k: int, admitted: np.ndarray[Any, Any] | None) -> list[int]:
    """Return the rows of the k highest scores among the admitted rows (a mask), best first."""
    if admitted is not None:
        scores = np.where(admitted, scores, -np.inf)
    k = min(k, len(scores))
    if k <= 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    rows: list[int] = best[np.isfinite(scores[best])].tolist()
    return rows


# Every this many rows is a sample whose k-th best score bounds the whole index's from below (see _top_matched).
SAMPLE_STRIDE = 64


def _top_matched(scores: np.ndarray[Any, Any], k: int) -> list[int]:
    """Return the rows of the k highest positive scores, best first (ties by row), as a full ranking would.

    At 1M chunks ranking every matched row (often most of the index) took 3 ms of a 16 ms search. The k-th best
    score of every SAMPLE_STRIDE-th row can only be lower than the index's own k-th best, so the rows scoring at
    least that hold the k best, and there are few of them (about SAMPLE_STRIDE × k).
    """
    sample = scores[::SAMPLE_STRIDE]
    floor = 0.0
    if len(sample) > k:
        floor = float(np.partition(sample, len(sample) - k)[len(sample) - k])
    rows = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
    return rows[_top(scores[rows], k, None)].tolist()  # type: ignore[no-any-return]


def _exact(snap: Snapshot, query: np.ndarray[Any, Any], k: int, rows: np.ndarray[Any, Any]) -> list[int]:
    """Return the k rows among `rows` nearest the query by exact cosine, best first."""
    best = _top(snap.vectors[rows] @ query, k, None)
    return rows[best].tolist()  # type: ignore[no-any-return]


def _nearest(snap: Snapshot, query: np.ndarray[Any, Any], k: int, admitted: np.ndarray[Any, Any] | None) -> list[int]:
    """Return the k admitted rows nearest the query, best first: exactly, or the graph's candidates rescored."""
    if admitted is not None and (len(admitted) <= EXACT_ROWS or snap.ann is None):
        if len(admitted) * 4 < snap.rows:  # few rows: gather them; many: one pass over all, masked
            return _exact(snap, query, k, admitted)
        mask = np.zeros(snap.rows, dtype=bool)
        mask[admitted] = True
        return _top(snap.vectors @ query, k, mask)
    if snap.ann is None:
        return _top(snap.vectors @ query, k, None)
    share = 1.0 if admitted is None else len(admitted) / snap.rows
    # A filter's rows are spread through the graph: ask for enough candidates that k of them pass it.
    count = min(snap.rows, int(math.ceil(max(k, ann.CANDIDATES) / share)))
    found = np.unique(ann.candidates(snap.ann, query, count))
    if admitted is not None:
        found = found[np.isin(found, admitted, assume_unique=True)]
        if len(found) < min(k, len(admitted)):  # the graph missed: the filter still gets its k rows
            return _exact(snap, query, k, admitted)
    return _exact(snap, query, k, found)


def search(snap: Snapshot, vector: list[float], k: int, *, query_terms: list[int] | None = None,
           sources: list[str] | None = None, headings: list[str] | None = None) -> list[tuple[Document, float]]:
    """Return k chunks with their cosine scores; with query terms, candidates come from RRF of cosine and BM25."""
    if snap.rows == 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    query /= float(np.linalg.norm(query)) or 1.0
    admitted = snap.admitted(sources, headings)
    rows = _nearest(snap, query, k, admitted)
    if query_terms and snap.hybrid:
        keyword = snap.keyword_scores(query_terms)
        if admitted is not None:
            inside = np.zeros(snap.rows, dtype=bool)
            inside[admitted] = True
            keyword[~inside] = 0.0
        by_keyword = _top_matched(keyword, k)
        # Qdrant's RRF, reimplemented: importing qdrant_client for it would cost most of a cold start.
        rows = reciprocal_rank_fusion([rows, by_keyword], k)
    # Cosine of the chosen rows only: as on a server, fused candidates come back best cosine first.
    cosine = snap.vectors[np.asarray(rows, dtype=np.int64)] @ query if rows else np.zeros(0, np.float32)
    ranked = sorted(zip(rows, cosine.tolist(), strict=True), key=lambda pair: -pair[1])
    found = [(snap.document(r), score) for r, score in ranked]
    for (document, _), (r, _) in zip(found, ranked, strict=True):
        document.metadata[VECTOR_KEY] = snap.vectors[r]  # a view: the conversation check reads it, nothing copies
    return found
