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

from tools.fetch import Fetcher, Page
from tools.sitescope import SiteScope

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
                 lastmods: dict[str, str] | None = None) -> list[str]:
    """Return every page URL a sitemap lists, following indexes; failures are appended, `lastmods` filled."""
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
        reason = fetcher.scope.refused_request(child) if fetcher.scope else ""
        if reason:
            failures.append((child, f"sitemap not followed: {reason}"))
        elif depth < 3:  # indexes nest at most once in practice; the bound stops a cycle
            pages.extend(sitemap_urls(fetcher, child, failures, depth + 1, lastmods=lastmods))
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
    """Load the site's robots.txt into the scope (no file, or one that cannot be fetched: no rules)."""
    try:
        response, body = fetcher.get(f"{scope.origin_url()}/robots.txt")
        scope.read_robots(response.status_code, body[:500_000])
    except httpx.HTTPError as exc:
        log.warning("robots.txt unreadable (%s); no rules applied", exc)
        scope.read_robots(0, b"")


def crawl(fetcher: Fetcher, root: str, include: list[str], exclude: list[str], max_pages: int) -> Iterator[Page]:
    """Visit the site's pages under `root` breadth-first by their links, wave by wave."""
    scope = fetcher.scope or SiteScope(root)
    refused = scope.refused_page(root)
    if refused:  # the root itself may be disallowed by robots.txt
        yield Page(root, "skipped", detail=refused)
        return
    seen, frontier = {root}, [root]
    while frontier:
        wave, frontier = frontier, []
        for page in fetcher.pages(wave):
            yield page
            for link in page.links:
                link = link.split("?", 1)[0]
                if link not in seen and len(seen) < max_pages and not scope.refused_page(link) \
                        and selected(link, include, exclude):
                    seen.add(link)
                    frontier.append(link)

