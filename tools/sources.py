"""What a run ingests: the documents of a folder or a site, each with its source path, URL and Markdown."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from logic import urls
from logic.chunking import parse_front_matter, split_front_matter
from logic.errors import InvalidInputError
from logic.validation import printable
from tools.crawl import Fetcher, Page, crawl, find_sitemap, read_robots, selected, sitemap_urls
from tools.localfiles import NotADocumentError, inside, listing, read_document
from tools.notebook import notebook_to_markdown
from tools.pagecache import Seen
from tools.restructured import rst_to_markdown
from tools.sitescope import SiteScope
from tools.webpage import html_to_markdown

log = logging.getLogger(__name__)
LASTMOD = "sitemap lastmod"  # why a page was not fetched: the sitemap dates it as when it was indexed


@dataclass
class Collected:
    """The documents found, and what could not be read (kept in the index, never treated as deleted)."""

    docs: dict[str, tuple[str, str]] = field(default_factory=dict)  # source -> (page URL, Markdown)
    failed: dict[str, str] = field(default_factory=dict)  # source or URL -> reason
    skipped: dict[str, str] = field(default_factory=dict)  # not a document (non-HTML, no text)
    gone: set[str] = field(default_factory=set)  # sources the site answered 404/410 for
    problems: dict[str, str] = field(default_factory=dict)  # indexed, but not as written (encoding, front matter)
    complete: bool = True  # False when part of the listing (a sitemap) failed: then nothing is removed
    # Pages not downloaded because they did not change (source -> "sitemap lastmod" or "HTTP 304"): kept as indexed.
    unchanged: dict[str, str] = field(default_factory=dict)
    seen: dict[str, Seen] = field(default_factory=dict)  # page URL -> its version, for the next run
    fetched: int = 0  # pages downloaded in full


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
    """Read every .md/.mdx/.rst/.ipynb/.html file under root (hidden folders skipped), the others as Markdown."""
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
            elif path.suffix == ".rst":
                text = rst_to_markdown(text, source)
            elif path.suffix == ".ipynb":
                text = notebook_to_markdown(text)
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
    try:
        path = urlsplit(url).path
    except ValueError:  # a link reported as unusable is named as written
        return url
    base = urlsplit(base_url).path if base_url else "/"
    base = base if base.endswith("/") else base.rsplit("/", 1)[0] + "/"
    if path.startswith(base):
        path = path[len(base):]
    path = path.strip("/").removesuffix(".html").removesuffix("/index")
    return path or "index"


def from_site(url: str, base_url: str = "", include: list[str] | None = None, exclude: list[str] | None = None,
              fetcher: Fetcher | None = None, max_pages: int = 5000,
              on_page: Callable[[Page], None] | None = None, known: dict[str, Seen] | None = None) -> Collected:
    """Fetch a site's pages from a sitemap (index) URL, the root's sitemap, or by crawling from the root.

    `known` (page URL -> version when last indexed) lets a sitemap's pages be skipped or fetched conditionally.
    Credentials in the URL (`user:password@`) are sent with every request and kept out of every URL stored.
    """
    include, exclude, known = include or [], exclude or [], known or {}
    fetcher = fetcher or Fetcher()
    found, failures, lastmods = Collected(), list[tuple[str, str]](), dict[str, str]()
    try:
        login, url = urls.credentials(url), urls.normalize(url)  # from here on, no URL carries the password
    except urls.BadURLError as exc:
        raise InvalidInputError(f"cannot ingest {urls.strip_credentials(url)!r}: {exc}") from None
    if login:
        fetcher.login(*login)
    scope = fetcher.scope = SiteScope(url)  # every request, redirect and listed page stays on this site
    try:  # the listing and the pages share one client, so one pool bounds all requests
        read_robots(fetcher, scope)
        is_sitemap = urlsplit(url).path.endswith((".xml", ".xml.gz"))
        sitemap = url if is_sitemap else find_sitemap(fetcher, url)
        base = base_url or (url.rsplit("/", 1)[0] + "/" if is_sitemap else url)
        if sitemap:
            wanted = []
            for listed in sitemap_urls(fetcher, sitemap, failures, lastmods=lastmods):
                try:
                    reason, normal = "", urls.normalize(listed)
                except urls.BadURLError as exc:  # one unusable entry is reported; the others are read
                    reason, normal = str(exc), listed
                if normal != listed and listed in lastmods:
                    lastmods[normal] = lastmods.pop(listed)
                listed, reason = normal, reason or scope.refused_page(normal)
                if reason:
                    found.skipped[listed] = f"not ingested: {reason}"
                elif selected(listed, include, exclude):
                    wanted.append(listed)
            if len(wanted) > max_pages:
                failures.append((sitemap, f"lists {len(wanted)} pages; only the first {max_pages} were read"))
            pages = _listed(fetcher, wanted[:max_pages], base, known, lastmods)
        else:  # every page's links are needed to find the others, so a crawl fetches every page
            pages = crawl(fetcher, url, include, exclude, max_pages)
        for page in pages:
            source = url_source(page.url, base)
            _collect(found, page, source)
            _remember(found, page, source, known.get(page.url), lastmods.get(page.url, ""))
            if on_page:
                on_page(page)
    finally:
        fetcher.close()
    for where, reason in failures:
        found.failed[where] = reason
    # A listing cut short (a failed sitemap, the crawl's time limit) proves nothing about missing pages.
    found.complete = not failures and not fetcher.crawl_expired()
    return found


def _listed(fetcher: Fetcher, urls: list[str], base: str, known: dict[str, Seen],
            lastmods: dict[str, str]) -> Iterator[Page]:
    """Yield a sitemap's pages: unchanged by lastmod without a request, the others by a (conditional) GET."""
    # A version recorded under another name (a changed --base-url) says nothing about this page's chunks.
    same = {u: known[u] for u in urls if u in known and known[u].source == url_source(u, base)}
    unchanged = {u for u in urls if u in same and same[u].lastmod and same[u].lastmod == lastmods.get(u)}
    for url in unchanged:
        yield Page(url, "unchanged", detail=LASTMOD)
    rest = [u for u in urls if u not in unchanged]
    yield from fetcher.pages(rest, {u: same[u].conditions() for u in rest if u in same})


def _remember(found: Collected, page: Page, source: str, before: Seen | None, lastmod: str) -> None:
    """Record the page's version for the next run: new when fetched, as before when unchanged or failed."""
    if page.status == "ok":
        found.seen[page.url] = Seen(source, lastmod, page.etag, page.last_modified)
    elif page.status == "unchanged" and before:
        found.seen[page.url] = replace(before, lastmod=lastmod, etag=page.etag or before.etag,
                                       last_modified=page.last_modified or before.last_modified)
    elif page.status == "failed" and before:  # its chunks are kept, and so is what they were built from
        found.seen[page.url] = before


def _collect(found: Collected, page: Page, source: str) -> None:
    """File one fetched page under documents, unchanged pages, failures, skips or gone pages."""
    if page.status == "unchanged":
        found.unchanged[source] = page.detail
        return
    if page.status == "ok":
        found.fetched += 1
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
            fetcher: Fetcher | None = None, progress: bool = False, max_pages: int = 5000,
            known: dict[str, Seen] | None = None) -> Collected:
    """Gather the documents of a folder, file, site root or sitemap URL (`known`: see `from_site`)."""
    base_url = urls.strip_credentials(base_url)  # URLs of pages are stored and shown: never with a password
    if location.startswith(("http://", "https://")):
        from tqdm import tqdm

        with tqdm(unit="page", desc="fetching", disable=not progress) as bar:
            return from_site(location, base_url, include, exclude, fetcher, max_pages, on_page=lambda _: bar.update(),
                             known=known)
    root = Path(location)
    if not root.exists():
        raise InvalidInputError(f"nothing to ingest: {root} does not exist")
    return from_folder(root, base_url, include, exclude)
