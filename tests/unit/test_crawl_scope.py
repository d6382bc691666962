"""The crawler stays on the site it was given: two loopback "hosts", sitemaps, links, redirects, robots.txt."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hostile import Server, send
from tools.crawl import Fetcher
from tools.sources import collect


def page(title: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    anchors = "".join(f'<a href="{link}">more</a> ' for link in links)
    return f"<html><body><main><h1>{title}</h1><p>{title} text about robots.</p>{anchors}</main></body></html>".encode()


def sitemap(urls: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()


@pytest.fixture
def other() -> Iterator[Server]:
    """An internal service on another loopback address: it must never be asked anything."""
    server = Server("127.0.0.2", {"/secret/": send(200, page("Internal admin secret")),
                                  "/": send(200, page("Internal root secret"))})
    yield server
    server.close()


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server("127.0.0.1")
    yield server
    server.close()


def fetcher() -> Fetcher:
    return Fetcher(concurrency=2, timeout=5, retries=0, backoff=0.01, page_seconds=10)


def texts(found) -> str:  # type: ignore[no-untyped-def]
    return " ".join(text for _, text in found.docs.values())


def test_sitemap_entries_on_another_host_or_port_are_refused(site: Server, other: Server) -> None:
    same_host_other_port = Server("127.0.0.1", {"/x/": send(200, page("Internal other port"))})
    try:
        site.routes.update({
            "/sitemap.xml": send(200, sitemap([f"{site.url}/docs/a/", f"{other.url}/secret/",
                                               f"{same_host_other_port.url}/x/"]), "application/xml"),
            "/docs/a/": send(200, page("Alpha")),
        })
        found = collect(f"{site.url}/sitemap.xml", fetcher=fetcher())
    finally:
        same_host_other_port.close()
    assert "Alpha" in texts(found) and "Internal" not in texts(found)
    assert not other.hits and not same_host_other_port.hits
    assert any("private or loopback" in why for why in found.skipped.values())
    assert f"{same_host_other_port.url}/x/" in found.skipped


def test_redirects_and_links_off_site_are_not_followed(site: Server, other: Server) -> None:
    site.routes.update({
        "/docs/": send(200, page("Home", ["/docs/a/", "/docs/moved/", f"{other.url}/secret/", "/blog/post/"])),
        "/docs/a/": send(200, page("Alpha")),
        "/docs/moved/": send(302, headers={"Location": f"{other.url}/secret/"}),
        "/blog/post/": send(200, page("Blog outside the prefix")),
    })
    found = collect(f"{site.url}/docs/", fetcher=fetcher())
    assert not other.hits
    assert "Alpha" in texts(found) and "Internal" not in texts(found)
    assert "Blog" not in texts(found) and not site.hits["/blog/post/"]
    assert "refused" in found.failed["moved"] and other.url.split("//")[1] in found.failed["moved"]


def test_site_root_without_trailing_slash_is_scoped_to_its_host(site: Server, other: Server) -> None:
    site.routes.update({
        "/": send(200, page("Root", ["/guide/", f"{other.url}/", f"{other.url}/secret/"])),
        "/guide/": send(200, page("Guide")),
    })
    found = collect(site.url, fetcher=fetcher())  # "http://127.0.0.1:PORT": no path at all
    assert not other.hits
    assert "Guide" in texts(found) and "Internal" not in texts(found)


def test_robots_txt_is_honoured(site: Server) -> None:
    site.routes.update({
        "/robots.txt": send(200, b"User-agent: *\nDisallow: /docs/private/\n", "text/plain"),
        "/docs/": send(200, page("Home", ["/docs/private/", "/docs/public/"])),
        "/docs/private/": send(200, page("Private")),
        "/docs/public/": send(200, page("Public")),
    })
    found = collect(f"{site.url}/docs/", fetcher=fetcher())
    assert "Public" in texts(found) and "Private" not in texts(found)
    assert not site.hits["/docs/private/"]


def test_robots_txt_disallowed_sitemap_entries_are_reported(site: Server) -> None:
    site.routes.update({
        "/robots.txt": send(200, b"User-agent: rag-agent-ingest\nDisallow: /b/\n", "text/plain"),
        "/sitemap.xml": send(200, sitemap([f"{site.url}/a/", f"{site.url}/b/"]), "application/xml"),
        "/a/": send(200, page("Alpha")), "/b/": send(200, page("Beta")),
    })
    found = collect(f"{site.url}/sitemap.xml", fetcher=fetcher())
    assert "Beta" not in texts(found) and not site.hits["/b/"]
    assert "robots.txt" in found.skipped[f"{site.url}/b/"]
