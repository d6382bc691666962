"""What a run ingests: the documents of a folder or a site, each with its source path, URL and Markdown."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from logic.chunking import split_front_matter
from logic.errors import InvalidInputError
from tools.crawl import Fetcher, Page, crawl, find_sitemap, selected, sitemap_urls
from tools.webpage import html_to_markdown

log = logging.getLogger(__name__)
SUFFIXES = {".md", ".mdx", ".html", ".htm"}


@dataclass
class Collected:
    """The documents found, and what could not be read (kept in the index, never treated as deleted)."""

    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # source -> (page URL, Markdown)
    failed: dict[str, str] = field(default_factory=dict)  # source or URL -> reason
    skipped: dict[str, str] = field(default_factory=dict)  # not a document (non-HTML, no text)
    gone: set[str] = field(default_factory=set)  # sources the site answered 404/410 for
    complete: bool = True  # False when part of the listing (a sitemap) failed: then nothing is removed


def page_url(source: str, text: str, base_url: str) -> str:
    """Return the page's URL as Docusaurus builds it (front matter slug or id, index pages), or its path."""
    front, _ = split_front_matter(text)
    stem = source.rsplit(".", 1)[0]
    folder = stem.rsplit("/", 1)[0] if "/" in stem else ""
    slug = str(front.get("slug") or "")
    if slug:
        path = slug.lstrip("/") if slug.startswith("/") else f"{folder}/{slug}".lstrip("/")
    elif front.get("id"):
        path = f"{folder}/{front['id']}".lstrip("/")
    else:
        path = stem[: -len("index")].rstrip("/") if stem == "index" or stem.endswith("/index") else stem
    return f"{base_url.rstrip('/')}/{path}" if base_url else source


def from_folder(root: Path, base_url: str = "", include: list[str] | None = None,
                exclude: list[str] | None = None) -> Collected:
    """Read every .md/.mdx/.html file under root (hidden folders skipped), converting HTML to Markdown."""
    found = Collected()
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    for path in paths:
        source = path.name if path == root else path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in source.split("/")) or not selected(source, include or [],
                                                                                   exclude or []):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix in {".html", ".htm"}:
                text = html_to_markdown(text)[0]
        except Exception as exc:  # an unreadable file is reported and skipped, the others still index
            found.failed[source] = f"{type(exc).__name__}: {exc}"
            continue
        if not text.strip():
            found.skipped[source] = "no text"
            continue
        found.docs[source] = (page_url(source, text, base_url), text)
    return found


def url_source(url: str, base_url: str) -> str:
    """Name a page by its URL path under the site's base URL: `docs/module-1/intro`, or `index`."""
    path = urlsplit(url).path
    base = urlsplit(base_url).path if base_url else "/"
    base = base if base.endswith("/") else base.rsplit("/", 1)[0] + "/"
    if path.startswith(base):
        path = path[len(base):]
    path = path.strip("/").removesuffix(".html").removesuffix("/index")
    return path or "index"


def from_site(url: str, base_url: str = "", include: list[str] | None = None, exclude: list[str] | None = None,
              fetcher: Fetcher | None = None, max_pages: int = 5000,
              on_page: Callable[[Page], None] | None = None) -> Collected:
    """Fetch a site's pages from a sitemap (index) URL, the root's sitemap, or by crawling from the root."""
    include, exclude = include or [], exclude or []
    fetcher = fetcher or Fetcher()
    found, failures = Collected(), list[tuple[str, str]]()
    try:  # the listing and the pages share one client, so one pool bounds all requests
        is_sitemap = urlsplit(url).path.endswith((".xml", ".xml.gz"))
        sitemap = url if is_sitemap else find_sitemap(fetcher, url)
        base = base_url or (url.rsplit("/", 1)[0] + "/" if is_sitemap else url)
        if sitemap:
            urls = [u for u in sitemap_urls(fetcher, sitemap, failures) if selected(u, include, exclude)][:max_pages]
            pages = fetcher.pages(urls)
        else:
            pages = crawl(fetcher, url, include, exclude, max_pages)
        for page in pages:
            _collect(found, page, url_source(page.url, base))
            if on_page:
                on_page(page)
    finally:
        fetcher.close()
    for where, reason in failures:
        found.failed[where] = reason
    found.complete = not failures
    return found


def _collect(found: Collected, page: Page, source: str) -> None:
    """File one fetched page under documents, failures, skips or gone pages."""
    if page.status == "ok" and page.markdown.strip():
        found.docs.setdefault(source, (page.url, page.markdown))
    elif page.status == "ok":
        found.skipped[page.url] = "no text"
    elif page.status == "skipped":
        found.skipped[page.url] = page.detail
    elif page.status == "gone":
        found.gone.add(source)
        found.failed[source] = f"{page.url}: {page.detail}"
    else:
        found.failed[source] = f"{page.url}: {page.detail}"
    if page.status != "ok":
        log.warning("skipped %s: %s", page.url, page.detail)


def collect(location: str, base_url: str = "", include: list[str] | None = None, exclude: list[str] | None = None,
            fetcher: Fetcher | None = None, progress: bool = False) -> Collected:
    """Gather the documents of a folder, file, site root or sitemap URL."""
    if location.startswith(("http://", "https://")):
        from tqdm import tqdm

        with tqdm(unit="page", desc="fetching", disable=not progress) as bar:
            return from_site(location, base_url, include, exclude, fetcher, on_page=lambda _: bar.update())
    root = Path(location)
    if not root.exists():
        raise InvalidInputError(f"nothing to ingest: {root} does not exist")
    return from_folder(root, base_url, include, exclude)
