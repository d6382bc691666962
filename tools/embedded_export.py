"""The embedded index's write side: merge the current snapshot and the write log into a new snapshot, streamed.

Every file of a snapshot is written in blocks of rows: the vectors and postings pass through RAM a
block at a time, so a merge at 1M chunks holds about what one block, the ANN graph and the source
list need, not the index. `SnapshotWriter` is the one place a snapshot's per-row files are written.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

from tools import ann, sentence_store, staging
from tools.embedded_index import CURRENT, Snapshot, root, source_map
from tools.snapshot_files import FileRows, NpyWriter, Postings, data_offset

FORMAT = 2  # meta.json "format": written by this merge (earlier snapshots were exported from local Qdrant)
_BLOCK = 20_000  # rows per block read from the base snapshot


class SnapshotWriter:
    """Write a new snapshot folder row by row: vectors, payloads, sources, headings, then its indexes."""

    def __init__(self, folder: Path, dimension: int, hybrid: bool, embedding_model: str = "",
                 passages: Embeddings | None = None) -> None:
        folder.mkdir(parents=True)
        self.folder, self.hybrid, self.rows = folder, hybrid, 0
        self.embedding_model, self.passages = embedding_model, passages
        self.vectors = NpyWriter(folder / "vectors.npy", np.float32, (dimension,))
        self.payloads = open(folder / "payloads.jsonl", "wb")  # noqa: SIM115 - closed by finish()
        self.offsets = NpyWriter(folder / "offsets.npy", np.int64)
        self.offsets.write(np.zeros(1, np.int64))
        self.source_ids = NpyWriter(folder / "source_ids.npy", np.int32)
        self.headings = open(folder / "headings.json", "w", encoding="utf-8")  # noqa: SIM115 - closed by finish()
        self.headings.write("[")
        self.sources: dict[str, int] = {}
        self.end = 0

    def add(self, vectors: np.ndarray[Any, Any], lines: list[bytes]) -> None:
        """Append rows: their unit vectors and payload lines (the source and headings are read from the line)."""
        ids = np.empty(len(lines), np.int32)
        headings = []
        for i, line in enumerate(lines):
            metadata = json.loads(line).get("metadata") or {}
            ids[i] = self.sources.setdefault(str(metadata.get("source", "")), len(self.sources))
            headings.append(json.dumps(list(metadata.get("heading_hierarchy") or []), ensure_ascii=False))
        if headings:
            staging.write_to(self.headings, ("," if self.rows else "") + ",".join(headings))
        self.vectors.write(vectors)
        staging.write_to(self.payloads, b"".join(lines))
        self.offsets.write(self.end + np.cumsum([len(line) for line in lines], dtype=np.int64))
        self.end += sum(len(line) for line in lines)
        self.source_ids.write(ids)
        self.rows += len(lines)

    def finish(self, postings: Postings | None) -> None:
        """Close the row files, write the postings, the source map and the ANN graph, then meta.json (last)."""
        self.headings.write("]")
        self.headings.close()
        self.payloads.close()
        for writer in (self.vectors, self.offsets, self.source_ids):
            writer.close()
        if self.hybrid:
            (postings or Postings([], [])).write(self.folder)
        vectors = cast(np.ndarray[Any, Any], FileRows(self.folder / "vectors.npy"))
        write_indexes(self.folder, vectors, np.load(self.folder / "source_ids.npy"), len(self.sources))
        # The extractive answerer's passage vectors (bundled embedder only), reusing the current snapshot's.
        sentence_store.write_for(self.folder, self.embedding_model, self.folder.parent / CURRENT, self.passages)
        meta = {"sources": list(self.sources), "hybrid": self.hybrid, "rows": self.rows, "format": FORMAT}
        (self.folder / "meta.json").write_text(json.dumps(meta, ensure_ascii=False))


def merge(data_dir: str | Path, collection: str, log: staging.Log, folder: Path, *, dimension: int,
          hybrid: bool, embedding_model: str = "", passages: Embeddings | None = None) -> Path:
    """Write the current snapshot's surviving rows, then the log's live rows, as a new snapshot, and publish it."""
    base_dir = root(data_dir, collection)
    base = None if log.reset else _current(base_dir)
    name = uuid.uuid4().hex
    writer = SnapshotWriter(base_dir / f".tmp-{name}", dimension, hybrid, embedding_model, passages)
    base_rows: list[tuple[Snapshot, np.ndarray[Any, Any]]] = []
    if base is not None and base.rows:
        base_rows.append((base, _copy_base(writer, base, log)))
    segments: dict[int, np.ndarray[Any, Any]] = {}
    for at, batch in enumerate(log.batches):
        live = [log.owner.get(page) == at for page, _ in batch.pages]
        if not any(live):
            continue
        vectors, lines = staging.read_vectors(folder, batch, dimension), staging.read_lines(folder, batch)
        keep = np.repeat(np.asarray(live), [n for _, n in batch.pages])
        rows = segments.setdefault(batch.segment, np.full(0, -1, np.int64))
        if len(rows) < batch.rows[1]:
            rows = segments[batch.segment] = np.concatenate([rows, np.full(batch.rows[1] - len(rows), -1, np.int64)])
        rows[batch.rows[0]:batch.rows[1]][keep] = writer.rows + np.arange(int(keep.sum()))
        writer.add(vectors[keep], [line for line, k in zip(lines, keep, strict=True) if k])
    postings = Postings(base_rows, [(folder, s, rows) for s, rows in segments.items()]) if hybrid else None
    writer.finish(postings)
    return _publish(base_dir, writer.folder, name)


def _current(base_dir: Path) -> Snapshot | None:
    """Open the collection's current snapshot, if any."""
    from tools.embedded_index import load

    try:
        name = (base_dir / CURRENT).read_text().strip()
    except FileNotFoundError:
        return None
    return load(base_dir / name)


def _copy_base(writer: SnapshotWriter, base: Snapshot, log: staging.Log) -> np.ndarray[Any, Any]:
    """Copy the base rows of pages the log leaves alone, in blocks; return each base row's new row (-1: dropped)."""
    dropped = np.asarray([s in log.owner for s in base.sources] + [True], dtype=bool)
    offset = data_offset(base.folder / "vectors.npy")
    dimension = int(base.vectors.shape[1])
    new = np.full(base.rows, -1, np.int64)
    with open(base.folder / "vectors.npy", "rb") as vectors, open(base.folder / "payloads.jsonl", "rb") as payloads:
        for first in range(0, base.rows, _BLOCK):
            last = min(first + _BLOCK, base.rows)
            keep = ~dropped[np.asarray(base.source_ids[first:last])]
            if not keep.any():
                continue
            # Read with file reads, not the map: a merge's mapped pages would count as its memory.
            vectors.seek(offset + first * dimension * 4)
            block = np.fromfile(vectors, np.float32, (last - first) * dimension).reshape(-1, dimension)
            ends = np.asarray(base.offsets[first:last + 1])
            payloads.seek(int(ends[0]))
            raw = payloads.read(int(ends[-1] - ends[0]))
            spans = zip(ends[:-1] - ends[0], ends[1:] - ends[0], keep, strict=True)
            lines = [raw[int(a):int(b)] for a, b, k in spans if k]
            new[first:last][keep] = writer.rows + np.arange(len(lines))
            writer.add(block[keep], lines)
    return new


def write_indexes(folder: Path, vectors: np.ndarray[Any, Any], source_ids: np.ndarray[Any, Any],
                  sources: int) -> None:
    """Write what readers search by besides the vectors: the source -> rows map and, at scale, the ANN graph."""
    order, starts = source_map(folder, source_ids, sources)
    np.save(folder / "source_rows.npy", order.astype(np.int32))
    np.save(folder / "source_starts.npy", starts.astype(np.int64))
    if len(vectors) >= ann.MIN_ROWS:  # built before the snapshot is published: readers never see it half-made
        ann.build(vectors, folder / ann.FILE)


def _publish(base: Path, folder: Path, name: str) -> Path:
    """Make a finished snapshot current, then drop all but the previous one.

    The previous snapshot stays for readers that opened it before the swap and still read its lazily
    loaded files; older ones go (on Windows an open map keeps a folder until its reader closes).
    """
    final = base / name
    _sync_folder(folder)
    folder.rename(final)
    try:
        previous = (base / CURRENT).read_text().strip()
    except FileNotFoundError:
        previous = ""
    pointer = base / f".{CURRENT}-{name}"
    pointer.write_text(name)
    os.replace(pointer, base / CURRENT)
    for old in base.iterdir():
        if old.is_dir() and old.name not in (name, previous) and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)
        elif old.is_dir() and old.name.startswith(".tmp-") and old != folder:
            shutil.rmtree(old, ignore_errors=True)  # a merge killed before publishing
    return final


def _sync_folder(folder: Path) -> None:
    """Make a snapshot's files durable before it becomes current (the write log is cleared after)."""
    for path in folder.iterdir():
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
