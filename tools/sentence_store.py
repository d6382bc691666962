"""The extractive answerer's passage vectors, embedded at ingest and looked up at answer time.

Without a language model the answerer ranks each retrieved chunk's quotable units (sentences, lists,
code blocks: logic/passages.py) by the embedder's cosine with the question. Embedding those units at
every turn was three quarters of a warm offline turn; ingest embeds them once per snapshot instead,
and a turn embeds only what the store lacks.

Vectors are keyed by a hash of the exact text the answerer scores, so whatever changes how it splits
or cleans a chunk costs speed (a miss is embedded as before), never a different answer. Files, beside
the snapshot's others:

- ``sentence_keys.npy``: (n,) uint64, sorted, the blake2b-64 of each text;
- ``sentence_index.npy``: (n,) int64, the row of ``sentence_vectors.npy`` holding that key's vector;
- ``sentence_meta.json``: the embedder and its dimension (vectors of another embedder are never reused);
- ``sentence_vectors.f16``: (n, dimension) float16 unit vectors, raw, rows in ingest order (written as
  embedded, so RAM holds a batch); the cosines they give differ from float32 ones by about 1e-4, far
  below any gap the answerer's score turns on.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from logic.injection import without_instructions
from logic.passages import units
from logic.unicode_text import normalize_text

log = logging.getLogger(__name__)
KEYS, INDEX, VECTORS, META = "sentence_keys.npy", "sentence_index.npy", "sentence_vectors.f16", "sentence_meta.json"
# The answerer scores the first this many characters of a unit (logic/extractive.py `extract_answer`).
SCORED_CHARS = 1000
# ...and the embedder reads the first this many word pieces of those: a passage's opening says what it is about
# (the sentence before a list or a command, a paragraph's topic sentence). On the sites benchmark's in-scope
# questions the answers held their keywords as often as with whole passages (0.707 against 0.700 over eleven
# sets; 48 and 64 word pieces: 0.700), and the passages embed in half the time (docs/benchmarks.md).
PASSAGE_TOKENS = 32
# Chunks read per embedding call at ingest: RAM holds a batch of texts, not the index's.
_ROWS = 512


def scored_texts(chunk_text: str) -> list[str]:
    """Return the texts the extractive answerer embeds for a stored chunk's text, as generate_grounded prepares it."""
    # As a turn sees the chunk: normalised for display (logic/hygiene.shown_chunk), instructions taken out.
    return [u.text[:SCORED_CHARS] for u in units(without_instructions(normalize_text(chunk_text)))]


def key(text: str) -> int:
    """Return the 64-bit key of a text."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _chunk_texts(payloads: Path) -> Iterator[str]:
    """Yield each row's chunk text from a snapshot's payloads file, in row order."""
    with open(payloads, "rb") as lines:
        for line in lines:
            metadata = json.loads(line).get("metadata") or {}
            yield str(metadata.get("text", ""))


def embed(embeddings: Embeddings, texts: list[str]) -> list[list[float]]:
    """Embed passages as the store holds them: their openings where the embedder can cut them, else whole."""
    openings = getattr(embeddings, "embed_openings", None)
    return openings(texts, PASSAGE_TOKENS) if openings is not None else embeddings.embed_documents(texts)


class Store:
    """A snapshot's passage vectors, memory-mapped: a lookup reads a few pages, not the file."""

    def __init__(self, folder: Path) -> None:
        meta = json.loads((folder / META).read_text())
        self.model, dimension = str(meta["model"]), int(meta["dimension"])
        # Word pieces each vector read; a store written before openings were embedded has whole passages (None).
        self.tokens: int | None = meta.get("tokens")
        self.keys: np.ndarray[Any, Any] = np.load(folder / KEYS, mmap_mode="r")
        self.index: np.ndarray[Any, Any] = np.load(folder / INDEX, mmap_mode="r")
        self.vectors: np.ndarray[Any, Any] = (
            np.memmap(folder / VECTORS, dtype=np.float16, mode="r", shape=(len(self.keys), dimension))
            if len(self.keys) else np.zeros((0, dimension), np.float16))

    def get(self, keys: Sequence[int]) -> list[np.ndarray[Any, Any] | None]:
        """Return each key's float32 vector, or None where the store has none."""
        if not len(self.keys) or not keys:
            return [None] * len(keys)
        wanted = np.asarray(keys, dtype=np.uint64)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        found = np.asarray(self.keys[at]) == wanted
        return [np.asarray(self.vectors[int(self.index[a])], dtype=np.float32) if hit else None
                for a, hit in zip(at.tolist(), found.tolist(), strict=True)]


def open_store(folder: Path, model: str) -> Store | None:
    """Open a snapshot's passage vectors of `model`; None for a snapshot written without them (or another model's).

    A store written before openings were embedded holds whole passages' vectors: turns still read them (as good
    for choosing, measured), and the next snapshot embeds its passages' openings anew rather than copy them.
    """
    if not (folder / META).exists():
        return None
    store = Store(folder)
    return store if store.model == model else None


def write(folder: Path, embeddings: Embeddings, model: str, previous: Path | None = None) -> int:
    """Embed every row's scored texts into `folder` (a snapshot being written); return how many were embedded.

    Texts whose vectors the previous snapshot holds are copied from it: an incremental ingest embeds
    only the passages of the pages it changed.
    """
    try:
        old = open_store(previous, model) if previous is not None and previous.is_dir() else None
    except (OSError, ValueError, KeyError):  # a damaged previous store: its passages are embedded again
        old = None
    if old is not None and old.tokens != PASSAGE_TOKENS:  # whole passages' vectors: the new store holds openings
        old = None
    seen: set[int] = set()
    keys: list[int] = []
    pending: list[tuple[int, str]] = []
    embedded = 0
    dimension: list[int] = []
    with open(folder / VECTORS, "wb") as out:

        def flush() -> None:
            """Write the pending texts' vectors: the previous snapshot's, else freshly embedded."""
            nonlocal embedded
            if not pending:
                return
            found: list[np.ndarray[Any, Any] | None] = (
                old.get([k for k, _ in pending]) if old is not None else [None] * len(pending))
            missing = [i for i, vector in enumerate(found) if vector is None]
            fresh = embed(embeddings, [pending[i][1] for i in missing]) if missing else []
            for i, vector in zip(missing, fresh, strict=True):
                found[i] = np.asarray(vector, dtype=np.float32)
            embedded += len(missing)
            block = np.stack([np.asarray(v, dtype=np.float32) for v in found])
            dimension.append(block.shape[1])
            block /= np.clip(np.linalg.norm(block, axis=1, keepdims=True), 1e-12, None)
            out.write(block.astype(np.float16).tobytes())
            keys.extend(k for k, _ in pending)
            pending.clear()

        for row, text in enumerate(_chunk_texts(folder / "payloads.jsonl"), start=1):
            for scored in scored_texts(text):
                k = key(scored)
                if k not in seen:
                    seen.add(k)
                    pending.append((k, scored))
            if row % _ROWS == 0:
                flush()
        flush()
    order = np.argsort(np.asarray(keys, dtype=np.uint64), kind="stable")
    np.save(folder / INDEX, order.astype(np.int64))
    np.save(folder / KEYS, np.asarray(keys, dtype=np.uint64)[order])
    # Last: a folder with the meta file has all three.
    (folder / META).write_text(json.dumps({"model": model, "dimension": dimension[0] if dimension else 0,
                                           "tokens": PASSAGE_TOKENS}))
    log.info("passage vectors: %d texts, %d embedded, %d reused", len(keys), embedded, len(keys) - embedded)
    return embedded


def write_for(folder: Path, embedding_model: str, pointer: Path, embeddings: Embeddings | None = None) -> int:
    """Write the passage vectors of a snapshot ingested with `embedding_model`: the bundled embedder only.

    `pointer` is the collection's CURRENT file, naming the previous snapshot, whose vectors are reused;
    `embeddings` is the embedder ingest used (by default the one the name loads).

    A paid embedder (Cohere) would bill every passage of the index, and the answerer asks none but the
    bundled one for cosines (nodes/generate_grounded.py `_similarity`).
    """
    if not embedding_model.startswith("local/"):
        return 0
    from tools.embeddings import get_embeddings

    try:
        previous: Path | None = pointer.parent / pointer.read_text().strip()
    except OSError:  # the first snapshot
        previous = None
    return write(folder, embeddings or get_embeddings(embedding_model), embedding_model, previous)


def cosines(embeddings: Embeddings, store: Store | None, query: str, texts: list[str]) -> list[float]:
    """Return the query's cosine with each text: stored vectors where the store has them, the rest embedded now."""
    if not texts:
        return []
    query_vector = np.asarray(embeddings.embed_query(query), dtype=np.float32)
    found: list[np.ndarray[Any, Any] | None] = (
        store.get([key(t) for t in texts]) if store is not None else [None] * len(texts))
    missing = [i for i, vector in enumerate(found) if vector is None]
    for i, vector in zip(missing, embed(embeddings, [texts[i] for i in missing]) if missing else [], strict=True):
        found[i] = np.asarray(vector, dtype=np.float32)
    matrix = np.stack([np.asarray(v, dtype=np.float32) for v in found])
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query_vector))
    dots = matrix @ query_vector
    return [float(d / n) if n else 0.0 for d, n in zip(dots.tolist(), norms.tolist(), strict=True)]
