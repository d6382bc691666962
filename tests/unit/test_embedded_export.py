"""The embedded store: incremental ingests merge into the snapshot a fresh build makes; killed runs and old indexes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logic.errors import IndexMismatchError, IndexMissingError, StorageError
from tools import embedded_export, embedded_index, manifest, search, snapshot_files, staging
from tools.embedded_store import EmbeddedStore
from tools.embeddings import HashEmbeddings
from tools.ingest import IngestReport, ingest_folder

PAGES = {f"part{i}/page{i}.md": f"# Page {i}\n\nPage {i} explains robot topic {i}: lidar, gripper and joint {i}.\n\n"
         f"## Details {i}\n\nMore about sensor {i % 3} and motor {i % 4}.\n" for i in range(12)}


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after the raise point runs."""


def write(folder: Path, pages: dict[str, str]) -> None:
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def run(folder: Path, data: Path, recreate: bool = False) -> IngestReport:
    return ingest_folder(folder, data_dir=data, collection="docs", embeddings=HashEmbeddings(64),
                         embedding_model="hash/64", recreate=recreate, progress=False, batch_size=3,
                         retrieval="hybrid")


def content(data: Path, weights: bool = True) -> dict[str, Any]:
    """Return what readers see, independent of row order: each chunk's vector, payload, headings and postings.

    Without `weights`, only each chunk's terms: BM25 weights follow the average chunk length measured
    at a collection's first write, which differs between an index built up and one built at once.
    """
    embedded_index._open.clear()
    snap = embedded_index.current(data, "docs")
    assert snap is not None and snap.terms is not None and snap.starts is not None and snap.docs is not None
    headings = json.loads((snap.folder / "headings.json").read_text())
    rows: dict[str, Any] = {}
    for r in range(snap.rows):
        doc = snap.document(r)
        assert snap.sources[int(snap.source_ids[r])] == doc.metadata["source"]
        assert headings[r] == doc.metadata["heading_hierarchy"]
        rows[doc.metadata["_id"]] = [np.round(np.asarray(snap.vectors[r]), 5).tolist(), doc.page_content,
                                     doc.metadata, {}]
    for at, term in enumerate(snap.terms.tolist()):
        for row in range(int(snap.starts[at]), int(snap.starts[at + 1])):
            chunk = snap.document(int(snap.docs[row])).metadata["_id"]
            rows[chunk][3][term] = round(float(snap.weights[row]), 5) if weights else 1.0
    return rows


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks, segments and postings buckets a few rows long, so a tiny index crosses every boundary."""
    monkeypatch.setattr(embedded_export, "_BLOCK", 5)
    monkeypatch.setattr(snapshot_files, "_BUCKET_ENTRIES", 40)
    monkeypatch.setattr(staging, "SEGMENT_ROWS", 4)


@pytest.mark.usefixtures("small_blocks")
def test_incremental_ingests_merge_into_what_a_fresh_build_holds(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    (docs / "part0/page0.md").unlink()
    (docs / "part5/page5.md").unlink()
    write(docs, {"part1/page1.md": "# Page 1\n\nRewritten: a camera sees colour.\n",
                 "new/extra.md": "# Extra\n\nA new page on wheels and odometry.\n"})
    report = run(docs, data)
    assert (report.added, report.updated, report.removed, report.embedded) == (1, 1, 2, 2)
    fresh = tmp_path / "fresh"
    run(docs, fresh)
    assert content(data, weights=False) == content(fresh, weights=False)
    assert report.chunks == len(content(data))
    assert not list((embedded_index.root(data, "docs") / ".staging").glob("seg-*"))  # the log is cleared


def test_streamed_npy_files_read_like_numpy_s_own(tmp_path: Path) -> None:
    writer = snapshot_files.NpyWriter(tmp_path / "a.npy", np.float32, (3,))
    blocks = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((4, 3), np.float32)]
    for block in blocks:
        writer.write(block)
    writer.close()
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.concatenate(blocks))
    assert np.array_equal(np.load(tmp_path / "a.npy", mmap_mode="r")[5], np.ones(3))


@pytest.mark.parametrize("when", ["before the publish", "after the publish"])
def test_a_merge_killed_leaves_readers_a_whole_snapshot_and_the_next_run_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    before = content(data)
    write(docs, {"new/extra.md": "# Extra\n\nA new page on wheels and odometry.\n"})
    publish = embedded_export._publish

    def killed(*args: Any) -> Path:
        if when == "after the publish":
            publish(*args)
        raise Killed

    monkeypatch.setattr(embedded_export, "_publish", killed)
    with pytest.raises(Killed):
        run(docs, data)
    monkeypatch.undo()
    assert content(data) == before if when == "before the publish" else len(content(data)) == len(before) + 1
    run(docs, data)
    fresh = tmp_path / "fresh"
    run(docs, fresh)
    assert content(data, weights=False) == content(fresh, weights=False)


def test_a_torn_journal_line_is_ignored_and_the_log_continues(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    monkeypatch.setattr(embedded_export, "merge", lambda *_a, **_k: (_ for _ in ()).throw(Killed()))
    with pytest.raises(Killed):  # every batch is in the log; the run dies before merging it
        run(docs, data)
    monkeypatch.undo()
    with pytest.raises(IndexMissingError, match="being ingested for the first time"):  # what a reader is told
        search.snapshot(data, "docs", "hybrid")
    journal = embedded_index.root(data, "docs") / ".staging" / staging.JOURNAL
    with open(journal, "ab") as handle:
        handle.write(b'{"op": "write", "segment": 1, "ro')  # a run killed while writing this line
    report = run(docs, data)  # the pages were recorded as stored: the log is merged, nothing embedded again
    assert (report.unchanged, report.embedded, report.chunks) == (len(PAGES), 0, 2 * len(PAGES))
    run(docs, tmp_path / "fresh")
    assert content(data) == content(tmp_path / "fresh")


def _as_earlier_version(data: Path, points: int) -> None:
    """Make the index look like one an earlier version exported from local Qdrant (holding `points`)."""
    snap = embedded_index.current(data, "docs")
    assert snap is not None
    meta = json.loads((snap.folder / "meta.json").read_text())
    del meta["format"]
    (snap.folder / "meta.json").write_text(json.dumps(meta))
    legacy = data / "qdrant" / "collection" / "docs"
    legacy.mkdir(parents=True)
    with sqlite3.connect(legacy / "storage.sqlite") as db:
        db.execute("CREATE TABLE points (id TEXT, point BLOB)")
        db.executemany("INSERT INTO points VALUES (?, ?)", [(str(i), b"") for i in range(points)])
    embedded_index._open.clear()


def test_an_index_from_an_earlier_version_is_continued_when_it_matches_its_manifest(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    _as_earlier_version(data, 2 * len(PAGES))
    write(docs, {"new/extra.md": "# Extra\n\nA new page on wheels and odometry.\n"})
    report = run(docs, data)
    assert (report.added, report.unchanged, report.embedded) == (1, len(PAGES), 1)
    fresh = tmp_path / "fresh"
    run(docs, fresh)
    assert content(data, weights=False) == content(fresh, weights=False)


@pytest.mark.parametrize("damage", ["local store holds more", "pending pages"])
def test_an_index_from_an_earlier_version_that_differs_asks_for_recreate(tmp_path: Path, damage: str) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    _as_earlier_version(data, 2 * len(PAGES) + (5 if damage == "local store holds more" else 0))
    if damage == "pending pages":
        entries = manifest.load(data)
        entries["collections"]["docs"]["pending"] = ["part1/page1.md"]
        manifest.save(data, entries)
    with pytest.raises(IndexMismatchError, match="built by an earlier version.*ingest PATH --recreate"):
        run(docs, data)
    assert run(docs, data, recreate=True).added == len(PAGES)


def test_a_second_ingest_while_one_writes_is_refused_naming_the_index(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    writing = EmbeddedStore(data, "docs")  # holds the write lock, as a running ingest does
    try:
        with pytest.raises(StorageError, match="being written by another ingest"):
            run(docs, data)
    finally:
        writing.close()
    assert run(docs, data).unchanged == len(PAGES)
