"""Re-ingesting a site skips unchanged pages: by the sitemap's lastmod without a request, else by a 304."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from logic.chunking import Passage, chunk_markdown
from rag_agent.cli.commands import main
from tests.unit.site import PAGES, Site, page_html, write_site
from tests.unit.test_ingest_site import CountingEmbeddings, payloads
from tools import embedded_index, manifest, pagecache, search
from tools.crawl import Fetcher
from tools.embeddings import HashEmbeddings
from tools.ingest import IngestReport, Settings, ingest
from tools.sources import collect

INTRO, SETUP, SENSORS = (f"/{path}/" for path in PAGES)
STAMPS = {path: "2024-05-01T10:00:00+00:00" for path in PAGES}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Site]]:
    """Start the generated site with the chosen validators (and sitemap lastmods)."""
    started: list[Site] = []

    def start(validators: set[str], lastmod: dict[str, str] | None = None) -> Site:
        root = tmp_path / "site"
        root.mkdir()
        site = Site(root, validators)
        write_site(root, site.port, lastmod=lastmod)
        started.append(site)
        return site

    yield start
    for site in started:
        site.close()


def run(site: Site, data: Path, recreate: bool = False) -> IngestReport:
    """Ingest the site as `rag-agent ingest` does: the pages' versions from last time, unless recreating."""
    settings = Settings(progress=False)
    known = {} if recreate else pagecache.load(data, "docs", pagecache.chunking(settings.chunk_tokens,
                                                                                 settings.chunk_overlap))
    found = collect(f"{site.url}/sitemap.xml", f"{site.url}/docs/", fetcher=Fetcher(retries=0), known=known)
    return ingest(found, data_dir=data, collection="docs", embeddings=CountingEmbeddings(), embedding_model="hash/256",
                  recreate=recreate, settings=settings)


def edit(site: Site, path: str, extra: str) -> None:
    """Add a paragraph to a served page, its file dated later (as a real edit would be)."""
    title, body = PAGES[path]
    page = site.root / path / "index.html"
    page.write_text(page_html(title, body + f"<p>{extra}</p>"), encoding="utf-8")
    later = page.stat().st_mtime + 60
    os.utime(page, (later, later))


def pages_hit(site: Site) -> dict[str, int]:
    return {path: site.hits[path] for path in (INTRO, SETUP, SENSORS)}


def test_pages_whose_sitemap_lastmod_is_unchanged_are_not_requested(serve: Callable[..., Site],
                                                                    tmp_path: Path) -> None:
    site, data = serve(set(), STAMPS), tmp_path / "data"
    assert run(site, data).added == 3
    before = payloads(data)
    report = run(site, data)
    assert pages_hit(site) == {INTRO: 1, SETUP: 1, SENSORS: 1}  # nothing fetched the second time
    assert (report.unchanged_lastmod, report.unchanged_304, report.fetched, report.changed) == (3, 0, 0, 0)
    assert (report.added, report.updated, report.removed, report.unchanged, report.embedded) == (0, 0, 0, 3, 0)
    assert sorted(payloads(data)) == sorted(before)


def test_a_page_whose_lastmod_changed_is_fetched_again_and_its_new_text_is_searchable(
        serve: Callable[..., Site], tmp_path: Path) -> None:
    site, data = serve(set(), STAMPS), tmp_path / "data"
    run(site, data)
    write_site(site.root, site.port, lastmod=STAMPS | {"docs/module-1/intro": "2024-06-02"})
    edit(site, "docs/module-1/intro", "Quaternions describe the gripper orientation.")
    report = run(site, data)
    assert pages_hit(site) == {INTRO: 2, SETUP: 1, SENSORS: 1}
    assert (report.fetched, report.changed, report.updated, report.unchanged_lastmod) == (1, 1, 1, 2)
    embedder, question = HashEmbeddings(256), "quaternions gripper orientation"
    hits = search.find(data, "docs", embedder, embedder.embed_query(question), 3, mode="hybrid", text=question)
    assert "Quaternions describe the gripper orientation." in hits[0][0].metadata["text"]
    assert hits[0][0].metadata["source"] == "module-1/intro"


@pytest.mark.parametrize("validator", ["etag", "last-modified"])
def test_a_page_without_lastmod_is_requested_conditionally_and_a_304_keeps_its_chunks(
        serve: Callable[..., Site], tmp_path: Path, validator: str) -> None:
    site, data = serve({validator}), tmp_path / "data"
    run(site, data)
    before = payloads(data)
    report = run(site, data)
    assert site.conditional == site.not_modified == {INTRO: 1, SETUP: 1, SENSORS: 1}
    assert (report.unchanged_304, report.unchanged_lastmod, report.fetched, report.removed) == (3, 0, 0, 0)
    assert report.unchanged == 3 and sorted(payloads(data)) == sorted(before)
    assert set(manifest.load(data)["collections"]["docs"]["documents"]) == {
        "module-1/intro", "module-1/setup", "module-2/sensors"}
    edit(site, "docs/module-2/sensors", "Sonar echoes locate walls.")  # a changed page answers 200
    report = run(site, data)
    assert (report.unchanged_304, report.fetched, report.updated) == (2, 1, 1)
    assert any("Sonar echoes locate walls." in p["metadata"]["text"] for _, p in payloads(data))


def test_cli_reports_skipped_pages_and_recreate_fetches_everything(
        serve: Callable[..., Site], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    site, data = serve({"etag"}, {"docs/module-1/intro": "2024-05-01", "docs/module-1/setup": "2024-05-01"}), \
        tmp_path / "data"
    command = ["--data-dir", str(data), "ingest", f"{site.url}/sitemap.xml"]
    assert main(command) == 0
    assert "pages: 3 fetched, 3 changed, 0 not downloaded as unchanged" in capsys.readouterr().out
    assert main(command) == 0
    assert ("pages: 0 fetched, 0 changed, 3 not downloaded as unchanged (2 by sitemap lastmod, 1 by HTTP 304)"
            in capsys.readouterr().out)
    assert main([*command, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["unchanged_lastmod"], report["unchanged_304"], report["fetched"], report["changed"]) == (2, 1, 0, 0)
    assert (report["added"], report["unchanged"], report["removed"]) == (0, 3, 0)  # the existing keys still count
    assert main([*command, "--recreate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["fetched"], report["added"], report["unchanged_lastmod"], report["unchanged_304"]) == (3, 3, 0, 0)
    assert pages_hit(site) == {INTRO: 2, SETUP: 2, SENSORS: 4}
    assert site.conditional == {SENSORS: 2} and site.not_modified == {SENSORS: 2}


@pytest.fixture
def upgrade(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Install "another version" of rag-agent: one whose code reads pages differently (a new fingerprint)."""

    def install() -> None:
        newer = "a-newer-reading"
        monkeypatch.setattr(pagecache, "reading_version", lambda: newer)
        monkeypatch.setattr("tools.ingest.reading_version", lambda: newer)

    return install


def test_after_an_upgrade_every_page_is_read_again_and_identical_chunks_stay_as_stored(
        serve: Callable[..., Site], tmp_path: Path, upgrade: Callable[[], None]) -> None:
    site, data = serve(set(), STAMPS), tmp_path / "data"
    run(site, data)
    before, snapshot = payloads(data), embedded_index.current(data, "docs")
    assert snapshot is not None
    upgrade()
    report = run(site, data)
    # The sitemap's lastmods are unchanged, but the stored chunks came from older code: every page is fetched.
    assert pages_hit(site) == {INTRO: 2, SETUP: 2, SENSORS: 2}
    assert (report.fetched, report.unchanged_lastmod, report.changed) == (3, 0, 0)
    assert (report.added, report.updated, report.unchanged, report.embedded) == (0, 0, 3, 0)
    assert report.notes == ["this version of rag-agent reads pages differently from the one that built the index, "
                            "so every page was read again: 3 came out as stored, 0 changed"]
    assert sorted(payloads(data)) == sorted(before)
    after = embedded_index.current(data, "docs")
    assert after is not None and after.folder == snapshot.folder  # nothing changed, so no new snapshot
    report = run(site, data)  # and from now on the lastmods count again
    assert (report.fetched, report.unchanged_lastmod, report.notes) == (0, 3, [])


def test_after_an_upgrade_a_page_the_new_code_reads_differently_is_written_again(
        serve: Callable[..., Site], tmp_path: Path, upgrade: Callable[[], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    site, data = serve(set(), STAMPS), tmp_path / "data"
    run(site, data)
    upgrade()

    def newer_chunker(text: str, source: str, *args: Any) -> list[Passage]:
        chunks = chunk_markdown(text, source, *args)
        if source == "module-2/sensors":  # say the new code shows a role's title where the old showed markup
            chunks[0].body += "\n\nLidar returns are read as point clouds."
        return chunks

    monkeypatch.setattr("tools.upsert.chunk_markdown", newer_chunker)
    report = run(site, data)
    assert (report.updated, report.unchanged, report.changed) == (1, 2, 1)
    assert 0 < report.embedded == len([p for _, p in payloads(data) if p["metadata"]["source"] == "module-2/sensors"])
    assert report.notes[0].endswith("2 came out as stored, 1 changed")
    embedder, question = HashEmbeddings(256), "lidar returns point clouds"
    hits = search.find(data, "docs", embedder, embedder.embed_query(question), 3, mode="hybrid", text=question)
    assert "Lidar returns are read as point clouds." in hits[0][0].metadata["text"]


def test_cli_says_why_an_upgrade_read_every_page_of_a_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        upgrade: Callable[[], None]) -> None:
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "intro.md").write_text("# Intro\n\nThe robot has two wheels.\n", encoding="utf-8")
    (docs / "arm.md").write_text("# Arm\n\nThe arm has six joints.\n", encoding="utf-8")
    command = ["--data-dir", str(tmp_path / "data"), "ingest", str(docs)]
    assert main(command) == 0
    capsys.readouterr()
    upgrade()
    assert main(command) == 0
    out, err = capsys.readouterr()
    assert "added 0, updated 0, removed 0, unchanged 2 documents" in out and "0 chunks embedded" in out
    assert "rag-agent: note: this version of rag-agent reads pages differently" in err
    assert main(command) == 0
    assert "note:" not in capsys.readouterr().err
