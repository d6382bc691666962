"""The files a snapshot merge streams: .npy files written by blocks, vectors read by rows, BM25 postings by bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from tools import staging
from tools.embedded_index import Snapshot

_BUCKET_ENTRIES = 4_000_000  # postings sorted at once (about 100 MB of RAM)
_HEADER = 128  # bytes reserved for a streamed .npy header: numpy pads its own to a multiple of 64, under 128


class NpyWriter:
    """Write a .npy file row block by row block, its length filled into the header at close."""

    def __init__(self, path: Path, dtype: Any, tail: tuple[int, ...] = ()) -> None:
        self.path, self.dtype, self.tail, self.rows = path, np.dtype(dtype), tail, 0
        self.handle: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.handle.write(b"\0" * _HEADER)

    def write(self, block: np.ndarray[Any, Any]) -> None:
        """Append rows."""
        staging.write_to(self.handle, np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        self.rows += len(block)

    def close(self) -> None:
        """Write the header for the rows written and close the file."""
        descr = np.lib.format.dtype_to_descr(self.dtype)
        text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {(self.rows, *self.tail)!r}, }}"
        header = text.encode("latin1").ljust(_HEADER - 10 - 1) + b"\n"  # spaces: numpy's own padding
        self.handle.seek(0)
        self.handle.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
        self.handle.close()


class FileRows:
    """A .npy matrix read by row slices with file reads, for the graph build.

    The build reads every vector once; through a memory map they would all stay resident (1.5 GB at
    1M chunks, counted as the build's memory).
    """

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, data_offset(path)
        self.shape = tuple(np.load(path, mmap_mode="r").shape)

    def __len__(self) -> int:
        """Return the row count."""
        return int(self.shape[0])

    def __getitem__(self, rows: slice) -> np.ndarray[Any, Any]:
        """Read a slice of rows."""
        first, last, _ = rows.indices(len(self))
        width = int(np.prod(self.shape[1:]))
        with open(self.path, "rb") as handle:
            handle.seek(self.offset + first * width * 4)
            return np.fromfile(handle, np.float32, max(last - first, 0) * width).reshape(-1, *self.shape[1:])


class Postings:
    """The BM25 postings of a merge: the base's (rows renumbered) and the log's segments', sorted by term in buckets."""

    def __init__(self, base: list[tuple[Snapshot, np.ndarray[Any, Any]]],
                 segments: list[tuple[Path, int, np.ndarray[Any, Any]]]) -> None:
        self.base, self.segments = base, segments  # (snapshot, new row of each row or -1), (folder, segment, map)

    def _entries(self) -> int:
        """Return about how many postings there are, to choose the bucket count."""
        count = sum(len(snap.docs) for snap, _ in self.base if snap.docs is not None)
        for folder, segment, _ in self.segments:
            count += staging.segment_path(folder, segment, ".terms").stat().st_size // 8
        return count

    def write(self, folder: Path) -> None:
        """Write terms/starts/docs/weights: postings grouped by term, terms sorted, bucket by bucket of term ids."""
        buckets = max(1, -(-self._entries() // _BUCKET_ENTRIES))
        # Term ids are 31-bit hashes (sparse.py), so even buckets of ids hold about even shares of postings.
        edges = np.linspace(0, 2**31, buckets + 1).astype(np.int64)
        edges[0], edges[-1] = np.iinfo(np.int64).min, np.iinfo(np.int64).max
        docs, weights = NpyWriter(folder / "docs.npy", np.int32), NpyWriter(folder / "weights.npy", np.float32)
        terms, starts, at = [], [np.zeros(1, np.int64)], 0
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            parts = [self._base_part(snap, rows, lo, hi) for snap, rows in self.base]
            parts += [self._segment_part(f, s, rows, lo, hi) for f, s, rows in self.segments]
            bucket_terms = np.concatenate([p[0] for p in parts] or [np.zeros(0, np.int64)])
            if not len(bucket_terms):
                continue
            order = np.lexsort((np.concatenate([p[1] for p in parts] or [np.zeros(0, np.int32)]), bucket_terms))
            bucket_terms = bucket_terms[order]
            docs.write(np.concatenate([p[1] for p in parts] or [np.zeros(0, np.int32)])[order])
            weights.write(np.concatenate([p[2] for p in parts] or [np.zeros(0, np.float32)])[order])
            unique, first = np.unique(bucket_terms, return_index=True)
            terms.append(unique)
            starts.append(at + np.append(first[1:], len(bucket_terms)).astype(np.int64))
            at += len(bucket_terms)
        docs.close()
        weights.close()
        np.save(folder / "terms.npy", np.concatenate(terms))
        np.save(folder / "starts.npy", np.concatenate(starts))

    @staticmethod
    def _base_part(snap: Snapshot, rows: np.ndarray[Any, Any], lo: int, hi: int) -> tuple[Any, Any, Any]:
        """Return the base's postings of terms in [lo, hi), renumbered, without dropped rows."""
        assert snap.terms is not None and snap.starts is not None and snap.docs is not None \
            and snap.weights is not None, "a hybrid base has postings"
        first, last = np.searchsorted(snap.terms, [lo, hi])
        start, end = int(snap.starts[first]), int(snap.starts[last])
        terms = np.repeat(np.asarray(snap.terms[first:last]), np.diff(np.asarray(snap.starts[first:last + 1])))
        docs = rows[np.asarray(snap.docs[start:end])]
        kept = docs >= 0
        return terms[kept], docs[kept].astype(np.int32), np.asarray(snap.weights[start:end])[kept]

    @staticmethod
    def _segment_part(folder: Path, segment: int, rows: np.ndarray[Any, Any], lo: int, hi: int) -> tuple[Any, Any, Any]:
        """Return a segment's postings of terms in [lo, hi) whose rows are live, renumbered."""
        terms, seg_rows, weights = staging.read_postings(folder, segment)
        known = seg_rows < len(rows)
        new = np.full(len(seg_rows), -1, np.int64)
        new[known] = rows[seg_rows[known]]
        kept = (new >= 0) & (terms >= lo) & (terms < hi)
        return terms[kept], new[kept].astype(np.int32), weights[kept]


def data_offset(path: Path) -> int:
    """Return where a .npy file's data starts."""
    with open(path, "rb") as handle:
        major, _ = np.lib.format.read_magic(handle)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        read(handle)
        return handle.tell()
