"""Ingesting a served site: sitemap index, faults, deep links, clean text, and incremental re-runs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logic.errors import IndexMismatchError, InvalidInputError
from tests.unit.site import NOISE, PAGES, Site, write_site
from tools import embedded_index, manifest
from tools.crawl import Fetcher
from tools.embeddings import HashEmbeddings
from tools.ingest import IngestReport, Settings, ingest
from tools.sources import collect


class CountingEmbeddings(HashEmbeddings):
    """Hash embedder that counts the chunk texts it embeds."""

    def __init__(self) -> None:
        super().__init__(256)
        self.embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return super().embed_documents(texts)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    root = tmp_path / "site"
    root.mkdir()
    served = Site(root)
    write_site(root, served.port)
    yield served
    served.close()


def run(site: Site, data: Path, embeddings: HashEmbeddings | None = None, **kwargs: Any) -> IngestReport:
    fetcher = Fetcher(concurrency=2, timeout=5, retries=2, backoff=0.01)
    found = collect(f"{site.url}/sitemap.xml", f"{site.url}/docs/", fetcher=fetcher)
    return ingest(found, data_dir=data, collection="docs", embeddings=embeddings or CountingEmbeddings(),
                  embedding_model="hash/256", settings=Settings(progress=False), **kwargs)


def payloads(data: Path) -> list[tuple[str, dict[str, Any]]]:
    snap = embedded_index.current(data, "docs")
    assert snap is not None
    docs = [snap.document(r) for r in range(snap.rows)]
    return [(str(d.metadata.pop("_id")), {"page_content": d.page_content, "metadata": d.metadata}) for d in docs]


def test_sitemap_index_is_crawled_into_deep_linked_chunks(site: Site, tmp_path: Path) -> None:
    report = run(site, tmp_path / "data")
    assert (report.added, report.updated, report.removed) == (3, 0, 0)
    assert "broken" in report.failed and "404" in report.failed["broken"]
    assert any("manual.pdf" in url and "not HTML" in why for url, why in report.skipped.items())
    meta = {(m["metadata"]["source"], m["metadata"]["anchor"]): m["metadata"] for _, m in payloads(tmp_path / "data")}
    install = meta[("module-1/setup", "install-ros")]  # the site's own heading id, not the slug of its text
    assert install["source_url"] == f"{site.url}/docs/module-1/setup/#install-ros"
    assert install["title"] == "Setup" and install["heading_hierarchy"] == ["Install ROS 2"]
    assert install["module_name"] == "module-1" and install["chapter_id"] == "module-1/setup"
    assert "```bash\nsudo apt install ros-humble-desktop\nsource /opt/ros/humble/setup.bash\n```" in install["text"]
    verify = meta[("module-1/setup", "verify-the-install")]
    assert verify["heading_hierarchy"] == ["Install ROS 2", "Verify the install"]
    assert {m["module_name"] for m in meta.values()} == {"module-1", "module-2"}
    for _, payload in payloads(tmp_path / "data"):
        assert not [n for n in NOISE if n in payload["page_content"]], payload["page_content"]
        assert "\u200b" not in payload["page_content"]


def test_rerun_replaces_only_the_edited_page_and_removes_the_deleted_one(site: Site, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run(site, data)
    before = payloads(data)
    edited = dict(PAGES)
    title, body = edited["docs/module-1/intro"]
    edited["docs/module-1/intro"] = (title, body + "<p>Nodes exchange messages over topics.</p>")
    del edited["docs/module-2/sensors"]
    shutil.rmtree(site.root / "docs/module-2")
    write_site(site.root, site.port, edited)  # the new sitemap no longer lists the deleted page
    counter = CountingEmbeddings()
    report = run(site, data, counter)
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 1, 1, 1)
    after = payloads(data)
    intro_after = [pid for pid, p in after if p["metadata"]["source"] == "module-1/intro"]
    assert counter.embedded == len(intro_after) == report.embedded
    untouched = {pid for pid, p in before if p["metadata"]["source"] == "module-1/setup"}
    assert untouched == {pid for pid, p in after if p["metadata"]["source"] == "module-1/setup"}
    assert not [p for _, p in after if p["metadata"]["source"] == "module-2/sensors"]
    assert any("over topics" in p["page_content"] for _, p in after)
    assert set(manifest.load(data)["collections"]["docs"]["documents"]) == {"module-1/intro", "module-1/setup"}


def test_a_page_that_fails_is_kept_and_a_404_is_removed(site: Site, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run(site, data)
    site.faults["/docs/module-1/intro/"] = [500, 500, 500]  # more failures than retries
    shutil.rmtree(site.root / "docs/module-2")  # still listed in the sitemap: a 404 proves it is gone
    report = run(site, data)
    assert (report.removed, report.unchanged) == (1, 1)
    assert "HTTP 500" in report.failed["module-1/intro"]
    sources = {p["metadata"]["source"] for _, p in payloads(data)}
    assert sources == {"module-1/intro", "module-1/setup"}


def test_transient_errors_are_retried(site: Site, tmp_path: Path) -> None:
    site.faults["/docs/module-1/intro/"] = [503, 429]
    report = run(site, tmp_path / "data")
    assert report.added == 3 and "module-1/intro" not in report.failed
    assert site.hits["/docs/module-1/intro/"] == 3


def test_a_failed_sitemap_removes_nothing(site: Site, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run(site, data)
    site.faults["/sitemap-docs.xml"] = [500, 500, 500]
    with pytest.raises(InvalidInputError, match="sitemap"):
        run(site, data)
    assert len(manifest.load(data)["collections"]["docs"]["documents"]) == 3


def test_site_root_without_sitemap_is_crawled_by_links(site: Site, tmp_path: Path) -> None:
    (site.root / "sitemap.xml").unlink()
    (site.root / "index.html").write_text('<html><body><main><h1>Robot Book</h1><p>Welcome, reader.</p>'
                                          '<a href="/docs/module-1/intro/">Start</a></main></body></html>')
    found = collect(f"{site.url}/", fetcher=Fetcher(retries=0), exclude=["*/module-2/*"])
    assert set(found.docs) == {"index", "docs/module-1/intro", "docs/module-1/setup"}
    assert "docs/broken" in found.failed


def test_embedder_mismatch_is_a_clear_error(site: Site, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run(site, data)
    found = collect(f"{site.url}/sitemap.xml", fetcher=Fetcher(retries=0))
    with pytest.raises(IndexMismatchError, match="--recreate"):
        ingest(found, data_dir=data, collection="docs", embeddings=HashEmbeddings(128),
               embedding_model="hash/128", settings=Settings(progress=False))
