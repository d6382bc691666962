"""Ingesting a folder: re-runs, interruption, HTML files, the scale path and the CLI summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from rag_agent.cli.commands import main
from tests.unit.site import PAGES, page_html
from tests.unit.test_ingest_site import CountingEmbeddings, payloads
from tools import ingest as ingest_module
from tools import manifest, vectorstore
from tools.embedded_store import EmbeddedStore
from tools.embeddings import HashEmbeddings
from tools.ingest import Settings, ingest, ingest_folder
from tools.sources import collect, from_folder


def make_folder(root: Path) -> Path:
    for index in range(6):
        page = root / f"module-{index % 2 + 1}" / f"page-{index}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"---\nsidebar_label: Page {index}\n---\n\n## Topic {index}\n\nRobots learn skill {index}.\n")
    title, body = PAGES["docs/module-1/setup"]
    (root / "module-1" / "setup.html").write_text(page_html(title, body))
    return root


def run(root: Path, data: Path, embeddings: HashEmbeddings, **settings: Any) -> Any:
    return ingest(collect(str(root)), data_dir=data, collection="docs", embeddings=embeddings,
                  embedding_model="hash/256", settings=Settings(progress=False, **settings))


def chunks_of(root: Path, data: Path, source: str) -> list[dict[str, Any]]:
    """Ingest a folder with the hash embedder and return the stored chunks' metadata of one page."""
    run(root, data, HashEmbeddings(256))
    return [p["metadata"] for _, p in payloads(data) if p["metadata"]["source"] == source]


def test_second_run_embeds_nothing(tmp_path: Path) -> None:
    root, data = make_folder(tmp_path / "docs"), tmp_path / "data"
    first = run(root, data, CountingEmbeddings())
    assert first.added == 7 and first.chunks > 7
    counter = CountingEmbeddings()
    second = run(root, data, counter)
    assert (second.added, second.updated, second.removed, second.unchanged) == (0, 0, 0, 7)
    assert counter.embedded == 0 and second.chunks == first.chunks


def test_folder_metadata_html_and_sidebar_label(tmp_path: Path) -> None:
    root, data = make_folder(tmp_path / "docs"), tmp_path / "data"
    run(root, data, HashEmbeddings(256))
    meta = {p["metadata"]["chunk_id"]: p["metadata"] for _, p in payloads(data)}
    by_source = {m["source"]: m for m in meta.values()}
    assert by_source["module-2/page-1.md"]["title"] == "Page 1"
    assert by_source["module-2/page-1.md"]["module_name"] == "module-2"
    assert by_source["module-2/page-1.md"]["chapter_id"] == "module-2/page-1"
    html = [m for m in meta.values() if m["source"] == "module-1/setup.html"]
    assert {m["anchor"] for m in html} >= {"install-ros", "verify-the-install"}
    assert all("Sidebar" not in m["text"] for m in html)


def test_interrupted_run_leaves_a_usable_index_and_the_next_run_completes_it(tmp_path: Path) -> None:
    root, data = make_folder(tmp_path / "docs"), tmp_path / "data"

    class Crashing(HashEmbeddings):
        calls = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            Crashing.calls += 1
            if Crashing.calls == 3:
                raise KeyboardInterrupt
            return super().embed_documents(texts)

    with pytest.raises(KeyboardInterrupt):
        run(root, data, Crashing(256), batch_size=2)
    info = manifest.load(data)["collections"]["docs"]
    assert 0 < len(info["documents"]) < 7
    store = EmbeddedStore(data, "docs")
    stored = store.stored_sources()
    store.close()
    assert set(info["documents"]) <= stored  # every recorded page is fully stored
    report = run(root, data, HashEmbeddings(256), batch_size=2)
    assert report.added == 7 - len(info["documents"]) and report.unchanged == len(info["documents"])
    clean = tmp_path / "clean"
    run(root, clean, HashEmbeddings(256), batch_size=2)
    assert sorted(pid for pid, _ in payloads(data)) == sorted(pid for pid, _ in payloads(clean))


def test_embedded_store_warns_past_its_comfortable_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_module, "EMBEDDED_LIMIT", 3)
    report = run(make_folder(tmp_path / "docs"), tmp_path / "data", HashEmbeddings(256))
    assert report.warnings and "QDRANT_URL" in report.warnings[0]


def test_server_mode_indexes_source_and_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = QdrantClient(":memory:")  # stands in for the server
    indexed: list[str] = []
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # never contacted: the client is replaced below
    monkeypatch.setattr(vectorstore, "open_client", lambda _, **_kw: local)
    monkeypatch.setattr(vectorstore, "ensure_payload_indexes", lambda _c, _n, fields: indexed.extend(fields))
    report = run(make_folder(tmp_path / "docs"), tmp_path / "data", HashEmbeddings(256))
    assert indexed == ["metadata.source", "metadata.module_name"] and not report.warnings


def test_server_mode_keeps_the_points_of_pages_an_upgrade_reads_the_same(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    local = QdrantClient(":memory:")  # stands in for the server
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # never contacted: the client is replaced below
    monkeypatch.setattr(vectorstore, "open_client", lambda _, **_kw: local)
    monkeypatch.setattr(vectorstore, "ensure_payload_indexes", lambda *_: None)  # the in-memory client has none
    root, data = make_folder(tmp_path / "docs"), tmp_path / "data"
    run(root, data, HashEmbeddings(256))
    (root / "module-1" / "page-0.md").write_text("## Topic 0\n\nRobots estimate their pose by wheel odometry.\n")
    monkeypatch.setattr("tools.pagecache.reading_version", lambda: "a-newer-reading")  # an upgrade
    monkeypatch.setattr("tools.ingest.reading_version", lambda: "a-newer-reading")
    counting = CountingEmbeddings()
    report = run(root, data, counting)
    assert (report.updated, report.unchanged) == (1, 6)
    assert counting.embedded == 1  # only the edited page's chunk
    texts = list(vectorstore.iter_texts(local, "docs"))
    assert sum("wheel odometry" in t for t in texts) == 1 and len(texts) == report.chunks


def test_recreate_after_changing_the_embedder(tmp_path: Path) -> None:
    root, data = make_folder(tmp_path / "docs"), tmp_path / "data"
    ingest_folder(root, data_dir=data, collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    report = ingest_folder(root, data_dir=data, collection="docs", embeddings=HashEmbeddings(128),
                           embedding_model="hash/128", recreate=True, progress=False)
    assert report.added == 7
    assert manifest.load(data)["collections"]["docs"]["dimension"] == 128


def test_cli_ingests_a_folder_and_reports_unreadable_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    root = make_folder(tmp_path / "docs")
    assert main(["--data-dir", str(tmp_path / "data"), "ingest", str(root), "--chunk-tokens", "64"]) == 0
    assert "added 7, updated 0, removed 0, unchanged 0 documents" in capsys.readouterr().out
    assert main(["--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "missing")]) == 2
    assert main(["--data-dir", str(tmp_path / "data"), "ingest", str(root), "--chunk-overlap", "40",
                 "--chunk-tokens", "64"]) == 2


def test_documents_in_a_format_not_read_are_named_not_passed_over(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "setup.adoc").write_text("= Setup\n\nInstall it.\n")
    (root / "manual.pdf").write_bytes(b"%PDF-1.7")
    (root / "index.md").write_text("# Home\n")
    (root / "robots.txt").write_text("User-agent: *\n")
    found = from_folder(root)
    assert sorted(found.docs) == ["index.md"]
    reason = found.skipped["guide/setup.adoc"]
    assert "AsciiDoc is not read" in reason and "built HTML" in reason
    assert "PDF is not read" in found.skipped["manual.pdf"] and "robots.txt" not in found.skipped
