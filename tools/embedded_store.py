"""The embedded default's write store: the current snapshot plus a write log, merged into a new snapshot at the end.

Ingest appends each batch to the log (tools/staging.py) in the collection's folder; `finish` streams
the current snapshot's surviving rows and the log's live rows into a new snapshot, publishes it and
clears the log (tools/embedded_export.py). Memory is bounded by a batch while writing and by a block
of rows while merging, whatever the index's size. Readers only ever open published snapshots.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import IO, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from logic.errors import IndexMismatchError, StorageError
from tools import embedded_export, staging
from tools.embedded_index import CURRENT, Snapshot, root, source_map
from tools.index_store import Points

STAGING = ".staging"
LEGACY = "qdrant"  # where earlier versions kept qdrant-client's local mode, the store they exported from


class EmbeddedStore:
    """A collection in the data folder: snapshots for readers, a log for the ingest writing the next one."""

    atomic_batches = True  # a batch counts once its journal line is written, whole

    def __init__(self, data_dir: str | Path, collection: str) -> None:
        self.data_dir, self.collection = Path(data_dir), collection
        self.folder = root(data_dir, collection) / STAGING
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock: IO[bytes] | None = open(self.folder / "lock", "ab")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock.close()
            self._lock = None
            raise StorageError(f"the index in {self.folder.parent} is being written by another ingest; "
                               "wait for it to finish, then retry") from exc
        self.log = staging.replay(self.folder)
        self.writer: staging.Writer | None = None
        self.dimension, self.hybrid = 0, False
        self._opened: tuple[Snapshot | None] | None = None  # the base snapshot, opened on first use

    @property
    def _base(self) -> Snapshot | None:
        """Return the snapshot the log continues (None: none yet), naming it when it cannot be read."""
        if self._opened is None:
            self._opened = (_open_base(self.folder.parent),)
        return self._opened[0]

    def _writer(self) -> staging.Writer:
        """Open the log for appending on first use."""
        if self.writer is None:
            self.writer = staging.Writer(self.folder)
        return self.writer

    def exists(self) -> bool:
        """Tell whether a snapshot or a started log holds the collection."""
        return (self.folder.parent / CURRENT).exists() or not self.log.empty()

    def check(self, info: dict[str, Any]) -> None:
        """Refuse to continue a snapshot an earlier version exported unless it is all its manifest says."""
        base = self._base
        if base is None or not self.log.empty() or _format(base) >= embedded_export.FORMAT:
            return
        problem = _legacy_problem(base, info, self.data_dir / LEGACY / "collection" / self.collection)
        if problem:
            raise IndexMismatchError(
                f"this index was built by an earlier version and its snapshot {base.folder} {problem}; "
                f"run `rag-agent --collection {self.collection} ingest PATH --recreate` to rebuild it")

    def create(self, dimension: int, mode: str) -> None:
        """Remember the vectors' dimension and mode (the log needs no schema)."""
        self.dimension, self.hybrid = dimension, mode == "hybrid"

    def drop(self) -> None:
        """Start the log afresh: the next snapshot holds only what this ingest writes."""
        self._writer().reset()
        self.log.clear_base()

    def _base_counts(self) -> dict[str, int]:
        """Return the rows of each base page the log leaves alone."""
        base = None if self.log.reset else self._base
        if base is None:
            return {}
        _, starts = source_map(base.folder, base.source_ids, len(base.sources))
        sizes = np.diff(np.asarray(starts)).tolist()
        return {s: n for s, n in zip(base.sources, sizes, strict=True) if n and s not in self.log.owner}

    def stored_sources(self) -> set[str]:
        """Return the pages with chunks: the base's not rewritten since, and those the log holds."""
        return set(self._base_counts()) | set(self.log.live())

    def delete_sources(self, sources: list[str]) -> None:
        """Record these pages as deleted."""
        if sources:
            self._writer().delete(sources)
            self.log.drop(sources)

    def holds(self, source: str, documents: list[tuple[str, Document]]) -> bool:
        """Tell whether the published snapshot holds exactly these chunks of the page, and the log leaves them."""
        base = None if self.log.reset else self._base
        if base is None or source in self.log.owner:
            return False
        rows = base.rows_of([source]).tolist()
        if len(rows) != len(documents):
            return False
        stored = {}
        for row in rows:
            document = base.document(row)
            stored[document.metadata.pop("_id")] = document
        return all(stored.get(point_id) == document for point_id, document in documents)

    def write(self, pages: list[str], points: Points, stale: list[str]) -> None:
        """Append the batch to the log; its pages' rows are now exactly these (older ones are superseded)."""
        order = {page: i for i, page in enumerate(pages)}
        rows = sorted(range(len(points.ids)), key=lambda r: order[str(points.documents[r].metadata["source"])])
        counts = [(page, 0) for page in pages]
        for r in rows:
            at = order[str(points.documents[r].metadata["source"])]
            counts[at] = (pages[at], counts[at][1] + 1)
        dense = np.asarray(points.dense, dtype=np.float32).reshape(len(points.ids), -1)[rows]
        dense /= np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12)
        lines = [json.dumps({"id": points.ids[r], "page_content": points.documents[r].page_content,
                             "metadata": points.documents[r].metadata}, ensure_ascii=False).encode() + b"\n"
                 for r in rows]
        postings = None
        if points.sparse is not None:
            parts = [(np.asarray(points.sparse[r][0], np.int64), np.full(len(points.sparse[r][0]), at, np.int64),
                      np.asarray(points.sparse[r][1], np.float32)) for at, r in enumerate(rows)]
            postings = tuple(np.concatenate([p[i] for p in parts]) if parts else np.zeros(0) for i in range(3))
        self.log.add(self._writer().write(counts, dense, lines, postings))  # type: ignore[arg-type]

    def flush(self) -> None:
        """Make the log durable."""
        if self.writer is not None:
            self.writer.sync()

    def count(self) -> int:
        """Return how many chunks the next snapshot holds."""
        return sum(self._base_counts().values()) + sum(self.log.live().values())

    def iter_texts(self) -> Iterator[str]:
        """Yield every chunk's text from the published snapshot (call after `finish`)."""
        base = embedded_export._current(self.folder.parent)
        if base is None or not base.rows:
            return
        with open(base.folder / "payloads.jsonl", "rb") as handle:
            for line in handle:
                yield str(json.loads(line).get("page_content", ""))

    def finish(self, info: dict[str, Any], changed: bool, embeddings: Embeddings | None = None) -> None:
        """Merge the log into a new snapshot and publish it, when anything changed or there is none yet."""
        if not changed and self.log.empty() and self.exists():
            return
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        dimension = self.dimension or int(info.get("dimension") or 0)
        if not self.log.reset:
            self._base  # noqa: B018 - a damaged base is named before the merge starts
        try:
            embedded_export.merge(self.data_dir, self.collection, self.log, self.folder, dimension=dimension,
                                  hybrid=self.hybrid or info.get("retrieval") == "hybrid",
                                  embedding_model=str(info.get("embedding_model") or ""), passages=embeddings)
        except (ValueError, KeyError, IndexError) as exc:  # bytes that do not parse: a damaged segment
            raise StorageError(f"the index's write log in {self.folder} is unreadable ({type(exc).__name__}: "
                               f"{exc}); rebuild the index with `rag-agent --collection {self.collection} ingest "
                               "PATH --recreate`") from exc
        staging.clear(self.folder)  # after the publish: replaying the log on the new snapshot changes nothing
        self.log, self._opened = staging.Log(), None

    def close(self) -> None:
        """Close the log and release the write lock."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def _open_base(base_dir: Path) -> Snapshot | None:
    """Open the collection's current snapshot; a damaged one is a StorageError naming it and the remedy."""
    try:
        return embedded_export._current(base_dir)
    except OSError:
        raise
    except Exception as exc:  # numpy, JSON or usearch could not read it: the bytes are damaged
        name = (base_dir / CURRENT).read_text().strip()
        raise StorageError(f"the index snapshot {base_dir / name} is unreadable ({type(exc).__name__}: {exc}); "
                           f"rebuild the index with `rag-agent --collection {base_dir.name} ingest PATH --recreate`"
                           ) from exc


def _format(snap: Snapshot) -> int:
    """Return the snapshot format version (0: exported from local Qdrant by an earlier version)."""
    return int(json.loads((snap.folder / "meta.json").read_text()).get("format", 0))


def _legacy_problem(base: Snapshot, info: dict[str, Any], legacy: Path) -> str:
    """Say how an earlier version's snapshot differs from its manifest and local store, or "" when it matches."""
    if info.get("pending"):
        return "misses pages that ingest was writing when it stopped"
    expected = set(info.get("documents", {})) - set(info.get("empty", []))
    if set(base.sources) - {""} != expected:
        return "holds other pages than its manifest lists"
    storage = legacy / "storage.sqlite"
    if storage.exists():
        try:
            with closing(sqlite3.connect(f"file:{storage}?mode=ro", uri=True)) as db:
                (points,) = db.execute("SELECT COUNT(*) FROM points").fetchone()
        except sqlite3.Error:
            return f"cannot be checked against {storage}, which is unreadable"
        if int(points) != base.rows:
            return f"holds {base.rows} chunks where the store it was exported from holds {points}"
    return ""
