"""The embedded store's write log: batches appended to segment files, a journal saying which rows each page has now.

An ingest on the embedded index appends every batch of chunks to a segment (raw float32 vectors,
payload lines, BM25 postings) in `<collection>/.staging/`, then one journal line naming the batch's
pages and where their rows are. A page's rows are those of the last journal line naming it: a batch
that rewrites a page supersedes its older rows, a `delete` line drops it, a `reset` drops every page of
the snapshot the log continues from. A line is written after its segment bytes, so a run killed
mid-batch leaves a torn line or bytes no line names, both ignored; replaying the same log on the
snapshot it produced gives that snapshot again, so a run killed after publishing loses nothing either.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

import numpy as np

JOURNAL = "journal.jsonl"
# A segment is closed at this many rows: one set of files per ~10k chunks keeps a 1M-chunk ingest to ~100
# segments (a file set per 64-chunk batch would be ~15k), while a merge still reads one segment at a time.
SEGMENT_ROWS = 10_000
_SUFFIXES = (".f32", ".jsonl", ".terms", ".rows", ".weights")


@dataclass
class Batch:
    """One journal line: a batch's rows in a segment, grouped by page in order (name, rows)."""

    segment: int
    rows: tuple[int, int]
    bytes: tuple[int, int]
    entries: tuple[int, int]
    pages: list[tuple[str, int]]


@dataclass
class Log:
    """What a replayed journal says: whether the base was dropped, and each page's last batch (None: deleted)."""

    reset: bool = False
    batches: list[Batch] = field(default_factory=list)
    owner: dict[str, int | None] = field(default_factory=dict)  # page -> index into batches, None: deleted

    def live(self) -> dict[str, int]:
        """Return the pages the log holds rows for, with their row counts."""
        counts: dict[str, int] = {}
        for page, at in self.owner.items():
            if at is not None:
                rows = dict(self.batches[at].pages)[page]
                if rows:
                    counts[page] = rows
        return counts

    def empty(self) -> bool:
        """Tell whether the log changes nothing."""
        return not self.reset and not self.owner

    def add(self, batch: Batch) -> None:
        """Record a batch: its pages' rows are now the batch's."""
        self.batches.append(batch)
        self.owner.update(dict.fromkeys((p for p, _ in batch.pages), len(self.batches) - 1))

    def drop(self, pages: list[str]) -> None:
        """Record that these pages have no rows."""
        self.owner.update(dict.fromkeys(pages))

    def clear_base(self) -> None:
        """Record that no page of the base snapshot, nor any written before, is kept."""
        self.reset, self.owner = True, {}


def write_to(handle: IO[Any], data: Any) -> None:
    """Write to an open file; a failure (full disk, file size limit) names the file, as an open() failure does."""
    try:
        handle.write(data)
        handle.flush()
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror, str(handle.name)) from exc


def segment_path(folder: Path, segment: int, suffix: str) -> Path:
    """Return one file of a segment."""
    return folder / f"seg-{segment:06d}{suffix}"


def replay(folder: Path) -> Log:
    """Read the journal (a torn last line, from a run killed while writing it, is ignored)."""
    log = Log()
    try:
        lines = (folder / JOURNAL).read_bytes().split(b"\n")
    except FileNotFoundError:
        return log
    for line in lines:
        try:
            record: dict[str, Any] = json.loads(line)
        except ValueError:
            continue  # only the last line can be torn: every line before it was complete when the next began
        if record.get("op") == "reset":
            log.clear_base()
        elif record.get("op") == "delete":
            log.drop([str(p) for p in record["pages"]])
        elif record.get("op") == "write":
            batch = _batch(record)
            if _complete(folder, batch):
                log.add(batch)
    return log


def _batch(record: dict[str, Any]) -> Batch:
    """Return the batch a journal line describes."""
    rows, data, entries = record["rows"], record["bytes"], record["entries"]
    return Batch(int(record["segment"]), (int(rows[0]), int(rows[1])), (int(data[0]), int(data[1])),
                 (int(entries[0]), int(entries[1])), [(str(p), int(n)) for p, n in record["pages"]])


def _complete(folder: Path, batch: Batch) -> bool:
    """Tell whether the segment files hold every byte the batch names (an OS crash can lose unsynced ones)."""
    try:
        return segment_path(folder, batch.segment, ".jsonl").stat().st_size >= batch.bytes[1]
    except FileNotFoundError:
        return False


class Writer:
    """Appends batches to this run's segments and journal (one writer at a time: the store holds a lock)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        _trim_torn_line(folder / JOURNAL)
        used = [int(p.name[4:10]) for p in folder.glob("seg-*.jsonl")]
        # A new segment per run: a killed run's last segment may end in bytes no journal line names.
        self.segment = max(used, default=0)
        self.files: dict[str, BinaryIO] = {}
        self.rows = self.bytes = self.entries = 0
        self.journal = open(folder / JOURNAL, "ab")  # noqa: SIM115 - held for the run, closed by close()

    def _roll(self) -> None:
        """Start a new segment when none is open or the open one is full."""
        if self.files and self.rows < SEGMENT_ROWS:
            return
        self._close_segment()
        self.segment += 1
        self.files = {s: open(segment_path(self.folder, self.segment, s), "wb") for s in _SUFFIXES}  # noqa: SIM115
        self.rows = self.bytes = self.entries = 0

    def write(self, pages: list[tuple[str, int]], vectors: np.ndarray[Any, Any], lines: list[bytes],
              postings: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None) -> Batch:
        """Append one batch: rows grouped by page in `pages` order; postings' rows count from the batch's first."""
        self._roll()
        data = b"".join(lines)
        write_to(self.files[".f32"], np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        write_to(self.files[".jsonl"], data)
        entries = 0
        if postings is not None:
            terms, rows, weights = postings
            write_to(self.files[".terms"], np.asarray(terms, np.int64).tobytes())
            write_to(self.files[".rows"], (np.asarray(rows, np.int64) + self.rows).astype(np.int32).tobytes())
            write_to(self.files[".weights"], np.asarray(weights, np.float32).tobytes())
            entries = len(terms)
        # Each write is flushed: the bytes reach the OS before the journal line naming them.
        record = {"op": "write", "segment": self.segment, "rows": [self.rows, self.rows + len(lines)],
                  "bytes": [self.bytes, self.bytes + len(data)], "entries": [self.entries, self.entries + entries],
                  "pages": [[p, n] for p, n in pages]}
        self._append(record)
        self.rows, self.bytes, self.entries = self.rows + len(lines), self.bytes + len(data), self.entries + entries
        return _batch(record)

    def delete(self, pages: list[str]) -> None:
        """Record that these pages have no rows any more."""
        if pages:
            self._append({"op": "delete", "pages": pages})

    def reset(self) -> None:
        """Record that the log no longer continues the current snapshot (a --recreate)."""
        self._append({"op": "reset"})

    def _append(self, record: dict[str, Any]) -> None:
        """Append one journal line."""
        write_to(self.journal, json.dumps(record, ensure_ascii=False).encode() + b"\n")

    def sync(self) -> None:
        """Make everything written durable (segments first): called before the manifest records the pages."""
        for handle in self.files.values():
            os.fsync(handle.fileno())
        os.fsync(self.journal.fileno())

    def _close_segment(self) -> None:
        """Close the open segment's files."""
        for handle in self.files.values():
            handle.close()
        self.files = {}

    def close(self) -> None:
        """Close every file."""
        self._close_segment()
        self.journal.close()


def _trim_torn_line(path: Path) -> None:
    """Cut a torn last line off the journal, so the next line appended starts on a line of its own."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(end)


def clear(folder: Path) -> None:
    """Drop the log once its batches are in a published snapshot: the journal first, then its segments."""
    (folder / JOURNAL).unlink(missing_ok=True)
    for path in folder.glob("seg-*"):
        path.unlink(missing_ok=True)


def read_vectors(folder: Path, batch: Batch, dimension: int) -> np.ndarray[Any, Any]:
    """Read a batch's vectors from its segment."""
    start, end = batch.rows
    with open(segment_path(folder, batch.segment, ".f32"), "rb") as handle:
        handle.seek(start * dimension * 4)
        return np.fromfile(handle, dtype=np.float32, count=(end - start) * dimension).reshape(-1, dimension)


def read_lines(folder: Path, batch: Batch) -> list[bytes]:
    """Read a batch's payload lines from its segment."""
    start, end = batch.bytes
    with open(segment_path(folder, batch.segment, ".jsonl"), "rb") as handle:
        handle.seek(start)
        return handle.read(end - start).splitlines(keepends=True)


Arrays = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]


def read_postings(folder: Path, segment: int) -> Arrays:
    """Read a segment's postings (term, row in the segment, weight)."""
    terms = np.fromfile(segment_path(folder, segment, ".terms"), dtype=np.int64)
    rows = np.fromfile(segment_path(folder, segment, ".rows"), dtype=np.int32)
    weights = np.fromfile(segment_path(folder, segment, ".weights"), dtype=np.float32)
    n = min(len(terms), len(rows), len(weights))  # bytes past the last journal line are never mapped to rows
    return terms[:n], rows[:n], weights[:n]
