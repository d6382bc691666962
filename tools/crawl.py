"""Which pages a site has: sitemaps (and indexes) or a crawl by links, always inside the site the user named."""

from __future__ import annotations

import io
import logging
import zlib
from collections.abc import Iterator
from fnmatch import fnmatchcase
from urllib.parse import urldefrag, urlsplit

import httpx
from lxml import etree

from logic import urls
from tools.fetch import Fetcher, Page
from tools.sitescope import SiteScope, prefix_of

__all__ = ["Fetcher", "Page", "crawl", "find_sitemap", "parse_sitemap", "read_robots", "selected",
           "sitemap_entries", "sitemap_urls"]
log = logging.getLogger(__name__)
SITEMAP_MAX_BYTES = 50_000_000  # the sitemaps.org limit for one uncompressed sitemap
SITEMAP_MAX_URLS = 50_000  # the sitemaps.org limit of entries per sitemap


class SitemapTooLargeError(ValueError):
    """A sitemap past the protocol's limits (often a decompression bomb)."""


def selected(url: str, include: list[str], exclude: list[str]) -> bool:
    """Keep a URL (or path) when it matches an include glob (if any) and no exclude glob."""
    path = urlsplit(url).path or url

    def hit(patterns: list[str]) -> bool:
        return any(fnmatchcase(url, p) or fnmatchcase(path, p) for p in patterns)

    return (not include or hit(include)) and not hit(exclude)


def _inflate(body: bytes) -> bytes:
    """Return a gzipped body's content, refusing to inflate past SITEMAP_MAX_BYTES."""
    if body[:2] != b"\x1f\x8b":
        return body
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    # max_length stops the inflation itself: a 1 MB bomb never becomes gigabytes in memory.
    content = inflater.decompress(body, SITEMAP_MAX_BYTES + 1)
    if len(content) > SITEMAP_MAX_BYTES:
        raise SitemapTooLargeError(f"inflates to more than {SITEMAP_MAX_BYTES} bytes")
    return content


def sitemap_entries(body: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """Return ((page URL, lastmod or ""), child sitemap URLs) from a sitemap or sitemap index, gzipped or not."""
    entries: list[tuple[str, str]] = []
    kind = loc = lastmod = ""
    # No entity expansion and no network: a sitemap is untrusted input. Parsed as a stream, each
    # entry cleared once read, so memory follows the entries kept, not the document's tree.
    events = etree.iterparse(io.BytesIO(_inflate(body)), events=("start", "end"), resolve_entities=False,
                             no_network=True, huge_tree=False)
    for event, element in events:
        name = etree.QName(element).localname
        if event == "start":
            kind = kind or name
            continue
        if name == "loc" and element.text:
            loc = str(element.text).strip()
        elif name == "lastmod" and element.text:
            lastmod = str(element.text).strip()
        elif name in ("url", "sitemap"):
            if loc:
                entries.append((loc, lastmod))
            if len(entries) > SITEMAP_MAX_URLS:
                raise SitemapTooLargeError(f"lists more than {SITEMAP_MAX_URLS} URLs")
            loc = lastmod = ""
            element.clear()
    return ([], [u for u, _ in entries]) if kind == "sitemapindex" else (entries, [])


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """Return (page URLs, child sitemap URLs) from a sitemap or sitemap index, gzipped or not."""
    entries, children = sitemap_entries(body)
    return [url for url, _ in entries], children


def sitemap_urls(fetcher: Fetcher, url: str, failures: list[tuple[str, str]], depth: int = 0, *,
                 lastmods: dict[str, str] | None = None, within: str = "") -> list[str]:
    """Return every page URL a sitemap lists, following indexes; failures are appended, `lastmods` filled.

    An index's child sitemaps are fetched only under `within` (by default the folder of the first
    sitemap): an index cannot send the crawler to other paths of the host.
    """
    within = within or prefix_of(url)
    try:
        response, body = fetcher.get(url)
        response.raise_for_status()
        entries, children = sitemap_entries(body)
    except (httpx.HTTPError, etree.XMLSyntaxError, OSError, ValueError) as exc:
        failures.append((url, f"sitemap unreadable: {type(exc).__name__}: {exc}"))
        return []
    pages = [urldefrag(page)[0] for page, _ in entries]
    if lastmods is not None:
        lastmods.update((urldefrag(page)[0], stamp) for page, stamp in entries if stamp)
    for child in children:
        try:
            child = urls.normalize(child)
        except urls.BadURLError as exc:
            failures.append((child, f"sitemap not followed: {exc}"))
            continue
        reason = fetcher.scope.refused_path(child, within) if fetcher.scope else ""
        if reason:
            failures.append((child, f"sitemap not followed: {reason}"))
        elif depth < 3:  # indexes nest at most once in practice; the bound stops a cycle
            pages.extend(sitemap_urls(fetcher, child, failures, depth + 1, lastmods=lastmods, within=within))
    return list(dict.fromkeys(pages))


def find_sitemap(fetcher: Fetcher, root: str) -> str | None:
    """Return the site's sitemap URL (under the root, then at the origin), or None if it has none."""
    parts = urlsplit(root)
    for candidate in (f"{root.rstrip('/')}/sitemap.xml", f"{parts.scheme}://{parts.netloc}/sitemap.xml"):
        try:
            response, body = fetcher.get(candidate)
        except httpx.HTTPError:
            continue
        if response.status_code == 200 and body.lstrip()[:1] in (b"<", b"\x1f"):
            return candidate
    return None


def read_robots(fetcher: Fetcher, scope: SiteScope) -> None:
    """Load the site's robots.txt into the scope (RFC 9309: none on 4xx, everything refused on 5xx or no answer)."""
    try:
        response, body = fetcher.get(f"{scope.origin_url()}/robots.txt")
    except httpx.HTTPError as exc:
        scope.read_robots(0, b"", f"{type(exc).__name__}: {exc}")
    else:
        scope.read_robots(response.status_code, body[:500_000])  # RFC 9309 asks for at least 500 KiB parsed
    if scope.robots_refusal:
        log.warning("%s", scope.robots_refusal)


def link_target(link: str) -> tuple[str, str]:
    """Return (the link's normalised URL without its query, "") or ("", why it names no page).

    A link to another scheme (mailto:, javascript:) is no page and no error: ("", "").
    """
    try:
        if urlsplit(link).scheme.lower() not in ("http", "https"):
            return "", ""
        return urls.normalize(link.split("?", 1)[0]), ""
    except ValueError as exc:  # one unusable link is reported; the crawl goes on
        return "", str(exc)


def crawl(fetcher: Fetcher, root: str, include: list[str], exclude: list[str], max_pages: int) -> Iterator[Page]:
    """Visit the site's pages under `root` breadth-first by their links, wave by wave.

    A link on the site that is refused (outside the prefix, robots.txt, not a usable URL) is yielded
    once as a skipped page with its reason; links to other sites are not candidates and pass silently.
    """
    scope = fetcher.scope or SiteScope(root)
    root = urls.normalize(root)
    refused = scope.refused_page(root)
    if refused:  # the root itself may be disallowed by robots.txt
        yield Page(root, "skipped", detail=refused)
        return
    seen, frontier, reported = {root}, [root], set[str]()
    while frontier:
        wave, frontier = frontier, []
        for page in fetcher.pages(wave):
            yield page
            for raw in page.links:
                link, invalid = link_target(raw)
                if invalid and raw not in reported:
                    reported.add(raw)
                    yield Page(raw, "skipped", detail=f"not followed: {invalid}")
                if not link or link in seen or link in reported:
                    continue
                reason = scope.refused_page(link)
                if reason and not scope.refused_request(link):
                    reported.add(link)
                    yield Page(link, "skipped", detail=f"not followed: {reason}")
                elif not reason and len(seen) < max_pages and selected(link, include, exclude):
                    seen.add(link)
                    frontier.append(link)

