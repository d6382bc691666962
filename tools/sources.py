"""What a run ingests: the documents of a folder or a site, each with its source path, URL and Markdown."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from logic.chunking import parse_front_matter, split_front_matter
from logic.errors import InvalidInputError
from logic.validation import printable
from tools.crawl import Fetcher, Page, crawl, find_sitemap, read_robots, selected, sitemap_urls
from tools.localfiles import NotADocumentError, inside, listing, read_document
from tools.sitescope import SiteScope
from tools.webpage import html_to_markdown

log = logging.getLogger(__name__)


@dataclass
class Collected:
    """The documents found, and what could not be read (kept in the index, never treated as deleted)."""

    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # source -> (page URL, Markdown)
    failed: dict[str, str] = field(default_factory=dict)  # source or URL -> reason
    skipped: dict[str, str] = field(default_factory=dict)  # not a document (non-HTML, no text)
    gone: set[str] = field(default_factory=set)  # sources the site answered 404/410 for
    problems: dict[str, str] = field(default_factory=dict)  # indexed, but not as written (encoding, front matter)
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
    for path in listing(root, found.skipped):
        source = path.name if path == root else path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in source.split("/")) or not selected(source, include or [],
                                                                                   exclude or []):
            continue
        if not inside(path, root if root.is_dir() else root.parent):
            found.skipped[source] = "symlink to a file outside the folder, not followed"
            continue
        try:
            text, problem = read_document(path)
            if path.suffix in {".html", ".htm"}:
                text = html_to_markdown(text)[0]
        except NotADocumentError as exc:
            found.skipped[source] = str(exc)
            continue
        except Exception as exc:  # an unreadable file is reported and skipped, the others still index
            found.failed[source] = f"{type(exc).__name__}: {exc}"
            continue
        _add(found, source, text, base_url, problem)
    return found


def _add(found: Collected, source: str, text: str, base_url: str, problem: str = "", url: str = "") -> None:
    """File a document's text, without terminal escapes, noting what was wrong with it."""
    text = printable(text)  # an escape sequence in a page must never reach a reader's terminal
    front_problem = parse_front_matter(text)[2]
    problem = "; ".join(p for p in (problem, front_problem) if p)
    if problem:
        found.problems[source] = problem
    if not text.strip():
        found.skipped[source] = "no text"
        return
    found.docs.setdefault(source, (url or page_url(source, text, base_url), text))


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
    scope = fetcher.scope = SiteScope(url)  # every request, redirect and listed page stays on this site
    try:  # the listing and the pages share one client, so one pool bounds all requests
        read_robots(fetcher, scope)
        is_sitemap = urlsplit(url).path.endswith((".xml", ".xml.gz"))
        sitemap = url if is_sitemap else find_sitemap(fetcher, url)
        base = base_url or (url.rsplit("/", 1)[0] + "/" if is_sitemap else url)
        if sitemap:
            urls = []
            for listed in sitemap_urls(fetcher, sitemap, failures):
                reason = scope.refused_page(listed)
                if reason:
                    found.skipped[listed] = f"not ingested: {reason}"
                elif selected(listed, include, exclude):
                    urls.append(listed)
            if len(urls) > max_pages:
                failures.append((sitemap, f"lists {len(urls)} pages; only the first {max_pages} were read"))
            pages = fetcher.pages(urls[:max_pages])
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
    # A listing cut short (a failed sitemap, the crawl's time limit) proves nothing about missing pages.
    found.complete = not failures and not fetcher.crawl_expired()
    return found


def _collect(found: Collected, page: Page, source: str) -> None:
    """File one fetched page under documents, failures, skips or gone pages."""
    if page.status == "ok":
        _add(found, source, page.markdown, "", url=page.url)
        if source in found.skipped:
            found.skipped[page.url] = found.skipped.pop(source)
    elif page.status == "skipped":
        found.skipped[page.url] = page.detail
    elif page.status == "gone":
        found.gone.add(source)
        found.failed[source] = f"{page.url}: {page.detail}"
    else:
        found.failed[source] = f"{page.url}: {page.detail}"
    if page.status != "ok":
        log.warning("skipped %s: %s", printable(page.url), printable(page.detail))


def collect(location: str, base_url: str = "", include: list[str] | None = None, exclude: list[str] | None = None,
            fetcher: Fetcher | None = None, progress: bool = False, max_pages: int = 5000) -> Collected:
    """Gather the documents of a folder, file, site root or sitemap URL."""
    if location.startswith(("http://", "https://")):
        from tqdm import tqdm

        with tqdm(unit="page", desc="fetching", disable=not progress) as bar:
            return from_site(location, base_url, include, exclude, fetcher, max_pages, on_page=lambda _: bar.update())
    root = Path(location)
    if not root.exists():
        raise InvalidInputError(f"nothing to ingest: {root} does not exist")
    return from_folder(root, base_url, include, exclude)
