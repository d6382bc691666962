"""Re-ingest converges to exactly the folder's pages after a run killed at the worst moments."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.embedded_store import EmbeddedStore
from tools.embeddings import HashEmbeddings
from tools.ingest import IngestReport, ingest_folder

PAGES = {f"page{i}.md": f"# Page {i}\n\nPage {i} explains topic number {i} in a few words.\n" for i in range(6)}


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after the raise point runs, no handler cleans up."""


def write(folder: Path, pages: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for name, text in pages.items():
        (folder / name).write_text(text)


def run(folder: Path, data: Path, recreate: bool = False) -> IngestReport:
    return ingest_folder(folder, data_dir=data, collection="docs", embeddings=HashEmbeddings(64),
                         embedding_model="hash/64", recreate=recreate, progress=False, batch_size=2)


def stored(data: Path) -> dict[str, int]:
    """Return the chunks per page the index holds: its snapshot and the write log a killed run left."""
    store = EmbeddedStore(data, "docs")
    try:
        counts = store._base_counts()
        counts.update(store.log.live())
        return counts
    finally:
        store.close()


def test_page_stored_then_deleted_before_the_rerun_leaves_no_orphans(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    real = EmbeddedStore.write

    def killed_after_first_batch(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)  # type: ignore[arg-type]
        raise Killed  # the first batch's chunks are stored; the manifest never records them

    monkeypatch.setattr(EmbeddedStore, "write", killed_after_first_batch)
    with pytest.raises(Killed):
        run(docs, data)
    monkeypatch.setattr(EmbeddedStore, "write", real)
    assert set(stored(data)) == {"page0.md", "page1.md"}
    (docs / "page0.md").unlink()
    run(docs, data)
    assert set(stored(data)) == set(PAGES) - {"page0.md"}


def test_recreate_killed_after_the_drop_is_completed_by_a_plain_rerun(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    before = stored(data) if run(docs, data) else {}

    def killed(*_: object) -> None:
        raise Killed  # the old collection is dropped and an empty one exists

    monkeypatch.setattr(EmbeddedStore, "create", killed)
    with pytest.raises(Killed):
        run(docs, data, recreate=True)
    monkeypatch.undo()
    assert stored(data) == {}
    report = run(docs, data)
    assert report.added + report.updated == len(PAGES) and report.unchanged == 0
    assert stored(data) == before


def test_points_the_manifest_does_not_know_are_reconciled(tmp_path: Path) -> None:
    """Whatever the manifest says, the index ends holding exactly the folder's pages."""
    docs, data = tmp_path / "docs", tmp_path / "data"
    write(docs, PAGES)
    run(docs, data)
    manifest = (data / "manifest.json").read_text()
    write(docs, {"stray.md": "# Stray\n\nA page added, indexed, then removed.\n"})
    run(docs, data)  # the stray page is stored ...
    (data / "manifest.json").write_text(manifest)  # ... and the manifest rolled back, as after a crash
    (docs / "stray.md").unlink()
    report = run(docs, data)
    assert set(stored(data)) == set(PAGES)
    assert report.unchanged == len(PAGES) and report.embedded == 0
