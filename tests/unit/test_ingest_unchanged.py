"""Re-ingesting a site skips unchanged pages: by the sitemap's lastmod without a request, else by a 304."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rag_agent.cli.commands import main
from tests.unit.site import PAGES, Site, page_html, write_site
from tests.unit.test_ingest_site import CountingEmbeddings, payloads
from tools import manifest, pagecache, search
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
