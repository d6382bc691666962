"""The embedded index's write side: export a local Qdrant collection into memory-mappable files at ingest."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tools import ann, sentence_store, sparse
from tools.embedded_index import CURRENT, root, source_map
from tools.vectorstore import SPARSE_VECTOR

if TYPE_CHECKING:  # the caller brings the client; importing qdrant_client here would slow every cold turn
    from qdrant_client import QdrantClient

_BATCH = 2000


def _dense(vector: Any) -> list[float]:
    """Return a point's dense vector, whether stored unnamed alone or next to the named sparse one."""
    return list(vector.get("", []) if isinstance(vector, dict) else vector or [])


def _posting(row: int, vector: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Return one chunk's (term ids, row, weights) for the inverted index."""
    indices = np.asarray(vector.indices, dtype=np.int64)
    return indices, np.full(len(indices), row, dtype=np.int32), np.asarray(vector.values, dtype=np.float32)


def _postings(parts: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]],
              folder: Path) -> None:
    """Write the BM25 inverted index: postings grouped by term, terms sorted for binary search."""
    terms = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    docs = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
    weights = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, dtype=np.float32)
    order = np.argsort(terms, kind="stable")
    terms, docs, weights = terms[order], docs[order], weights[order]
    unique, starts = np.unique(terms, return_index=True)
    np.save(folder / "terms.npy", unique)
    np.save(folder / "starts.npy", np.append(starts, len(terms)).astype(np.int64))
    np.save(folder / "docs.npy", docs)
    np.save(folder / "weights.npy", weights)


def export(client: QdrantClient, collection: str, data_dir: str | Path, *, hybrid: bool,
           average_length: float = sparse.DEFAULT_AVERAGE_LENGTH, stored_sparse: bool = False,
           embedding_model: str = "") -> Path:
    """Write the collection's vectors, payloads and (hybrid) BM25 postings to a new snapshot and make it current.

    With `stored_sparse`, the BM25 vectors ingest stored with each point are reused; a point without
    one (or every point, without the flag: an index from the earlier encoder) is encoded from its text.
    With the bundled `embedding_model`, the extractive answerer's passage vectors are written too.
    """
    base = root(data_dir, collection)
    base.mkdir(parents=True, exist_ok=True)
    name = uuid.uuid4().hex
    folder = base / f".tmp-{name}"
    folder.mkdir()
    total = int(client.count(collection).count)
    encoder = sparse.encoder(average_length) if hybrid else None
    vectors: np.ndarray[Any, Any] | None = None
    extra: list[np.ndarray[Any, Any]] = []
    offsets, source_ids, sources, headings = [0], [], {}, []  # type: ignore[var-annotated]
    parts = []
    row, offset = 0, None
    with open(folder / "payloads.jsonl", "wb") as out:
        while True:
            points, offset = client.scroll(collection, limit=_BATCH, offset=offset, with_payload=True,
                                           with_vectors=True)
            texts: list[tuple[int, str]] = []
            for point in points:
                dense = np.asarray(_dense(point.vector), dtype=np.float32)
                if vectors is None:  # written into the snapshot's file as read: RAM holds a batch, not the index
                    vectors = np.lib.format.open_memmap(folder / "vectors.npy", mode="w+", dtype=np.float32,
                                                        shape=(total, len(dense))) if total else \
                        np.zeros((0, len(dense)), np.float32)
                unit = dense / (float(np.linalg.norm(dense)) or 1.0)
                if row < len(vectors):
                    vectors[row] = unit
                else:  # grew since counted: one ingest writes at a time, so only by a race
                    extra.append(unit)
                payload = point.payload or {}
                metadata = payload.get("metadata") or {}
                line = json.dumps({"id": point.id, "page_content": payload.get("page_content", ""),
                                   "metadata": metadata}, ensure_ascii=False).encode() + b"\n"
                out.write(line)
                offsets.append(offsets[-1] + len(line))
                source_ids.append(sources.setdefault(str(metadata.get("source", "")), len(sources)))
                headings.append(list(metadata.get("heading_hierarchy") or []))
                stored = point.vector.get(SPARSE_VECTOR) if isinstance(point.vector, dict) else None
                if encoder is not None and stored_sparse and stored is not None:
                    parts.append(_posting(row, stored))
                elif encoder is not None:
                    texts.append((row, str(payload.get("page_content", ""))))
                row += 1
            if encoder is not None and texts:
                encoded = encoder.embed_documents([t for _, t in texts])
                parts.extend(_posting(at, vec) for (at, _), vec in zip(texts, encoded, strict=True))
            if offset is None:
                break
    if vectors is None or row != len(vectors) or not isinstance(vectors, np.memmap):
        # No rows, or a count that changed while exporting: written again at the size read.
        kept = np.zeros((0, 0), np.float32) if vectors is None else np.concatenate(
            [np.asarray(vectors[:row]), *(e[None] for e in extra)])
        del vectors  # a map of the file is closed before the file is replaced
        np.save(folder / "vectors.npy", kept)
    else:
        vectors.flush()
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    np.save(folder / "offsets.npy", np.asarray(offsets, dtype=np.int64))
    ids = np.asarray(source_ids, dtype=np.int32)
    np.save(folder / "source_ids.npy", ids)
    write_indexes(folder, vectors, ids, len(sources))
    (folder / "headings.json").write_text(json.dumps(headings, ensure_ascii=False))
    if hybrid:
        _postings(parts, folder)
    sentence_store.write_for(folder, embedding_model, base / CURRENT)  # the answerer's passage vectors
    (folder / "meta.json").write_text(json.dumps({"sources": list(sources), "hybrid": hybrid, "rows": row}))
    return _publish(base, folder, name)


def write_indexes(folder: Path, vectors: np.ndarray[Any, Any], source_ids: np.ndarray[Any, Any],
                  sources: int) -> None:
    """Write what readers search by besides the vectors: the source -> rows map and, at scale, the ANN graph."""
    order, starts = source_map(folder, source_ids, sources)
    np.save(folder / "source_rows.npy", order.astype(np.int32))
    np.save(folder / "source_starts.npy", starts.astype(np.int64))
    if len(vectors) >= ann.MIN_ROWS:  # built before the snapshot is published: readers never see it half-made
        ann.build(vectors, folder / ann.FILE)


def export_collection(client: QdrantClient, collection: str, data_dir: str | Path, info: dict[str, Any]) -> Path:
    """Export a collection as its manifest entry describes it (mode, BM25 length and encoder)."""
    return export(client, collection, data_dir, hybrid=info.get("retrieval") == "hybrid",
                  average_length=float(info.get("bm25_average_length") or sparse.DEFAULT_AVERAGE_LENGTH),
                  stored_sparse=info.get("sparse") == sparse.ENCODING,
                  embedding_model=str(info.get("embedding_model") or ""))


def _publish(base: Path, folder: Path, name: str) -> Path:
    """Make a finished snapshot current, then drop all but the previous one.

    The previous snapshot stays for readers that opened it before the swap and still read its lazily
    loaded files; older ones go (on Windows an open map keeps a folder until its reader closes).
    """
    final = base / name
    folder.rename(final)
    try:
        previous = (base / CURRENT).read_text().strip()
    except FileNotFoundError:
        previous = ""
    pointer = base / f".{CURRENT}-{name}"
    pointer.write_text(name)
    os.replace(pointer, base / CURRENT)
    for old in base.iterdir():
        if old.is_dir() and old.name not in (name, previous):
            shutil.rmtree(old, ignore_errors=True)
    return final
