"""Which pages a site has and what they say: sitemaps (and indexes) or a same-site crawl, fetched politely."""

from __future__ import annotations

import gzip
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from urllib.parse import urldefrag, urlsplit

import httpx
from lxml import etree

from tools.webpage import html_to_markdown

log = logging.getLogger(__name__)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
GONE_STATUSES = frozenset({404, 410})
HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_BYTES = 20_000_000  # a docs page is far smaller; anything bigger is not worth indexing


@dataclass
class Page:
    """One fetched URL: its Markdown and links when it is an HTML page, else why it was not."""

    url: str
    status: str  # "ok", "skipped" (not HTML), "gone" (404/410), "failed"
    markdown: str = ""
    links: list[str] = field(default_factory=list)
    detail: str = ""


def selected(url: str, include: list[str], exclude: list[str]) -> bool:
    """Keep a URL (or path) when it matches an include glob (if any) and no exclude glob."""
    path = urlsplit(url).path or url

    def hit(patterns: list[str]) -> bool:
        return any(fnmatchcase(url, p) or fnmatchcase(path, p) for p in patterns)

    return (not include or hit(include)) and not hit(exclude)


class Fetcher:
    """An HTTP client with timeouts, bounded concurrency and retries with backoff."""

    def __init__(self, *, concurrency: int = 4, timeout: float = 15.0, retries: int = 3, backoff: float = 0.5) -> None:
        self.concurrency, self.retries, self.backoff = concurrency, retries, backoff
        self.client = httpx.Client(
            timeout=timeout, follow_redirects=True, limits=httpx.Limits(max_connections=concurrency),
            headers={"User-Agent": "rag-agent-ingest/0.1 (+docs indexer)"},
        )

    def close(self) -> None:
        """Release the connection pool."""
        self.client.close()

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        """Return how long to wait before retrying: the server's Retry-After, else exponential backoff."""
        after = response.headers.get("Retry-After", "") if response is not None else ""
        delay = float(after) if after.isdigit() else self.backoff * 2**attempt
        return min(delay, 30.0)

    def get(self, url: str, *, html_only: bool = False) -> tuple[httpx.Response, bytes]:
        """GET a URL, retrying 429/5xx and connection errors; the body is skipped for non-HTML when asked."""
        for attempt in range(self.retries + 1):
            try:
                with self.client.stream("GET", url) as response:
                    if response.status_code in RETRY_STATUSES and attempt < self.retries:
                        time.sleep(self._wait(attempt, response))
                        continue
                    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
                    if html_only and (response.status_code != 200 or kind not in HTML_TYPES):
                        return response, b""  # a PDF or image is never downloaded just to be skipped
                    return response, _read(response)
            except httpx.TransportError:
                if attempt >= self.retries:
                    raise
                time.sleep(self._wait(attempt, None))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def page(self, url: str) -> Page:
        """Fetch one page and convert it; every failure becomes a Page with a reason, never an exception."""
        try:
            response, body = self.get(url, html_only=True)
        except httpx.HTTPError as exc:
            return Page(url, "failed", detail=f"{type(exc).__name__}: {exc}")
        if response.status_code in GONE_STATUSES:
            return Page(url, "gone", detail=f"HTTP {response.status_code}")
        if response.status_code != 200:
            return Page(url, "failed", detail=f"HTTP {response.status_code}")
        if not body:
            kind = response.headers.get("Content-Type", "unknown type")
            return Page(url, "skipped", detail=f"not HTML ({kind})")
        try:
            markdown, links = html_to_markdown(body, str(response.url))
        except Exception as exc:  # a page the parser chokes on is reported, never fatal to the run
            return Page(url, "failed", detail=f"cannot parse: {type(exc).__name__}")
        return Page(url, "ok", markdown=markdown, links=links)

    def pages(self, urls: list[str]) -> Iterator[Page]:
        """Fetch pages with at most `concurrency` requests in flight, yielding them in the given order."""
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            yield from pool.map(self.page, urls)


def _read(response: httpx.Response) -> bytes:
    """Read a streamed body up to MAX_BYTES."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BYTES:
            raise httpx.DecodingError(f"body larger than {MAX_BYTES} bytes")
    return b"".join(chunks)


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """Return (page URLs, child sitemap URLs) from a sitemap or sitemap index, gzipped or not."""
    if body[:2] == b"\x1f\x8b":
        body = gzip.decompress(body)
    # No entity expansion and no network: a sitemap is untrusted input.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.fromstring(body, parser=parser)
    kind = etree.QName(root).localname
    locs = [str(el.text).strip() for el in root.iter() if etree.QName(el).localname == "loc" and el.text]
    return ([], locs) if kind == "sitemapindex" else (locs, [])


def sitemap_urls(fetcher: Fetcher, url: str, failures: list[tuple[str, str]], depth: int = 0) -> list[str]:
    """Return every page URL a sitemap lists, following sitemap indexes; failures are appended, not raised."""
    try:
        response, body = fetcher.get(url)
        response.raise_for_status()
        pages, children = parse_sitemap(body)
    except (httpx.HTTPError, etree.XMLSyntaxError, OSError) as exc:
        failures.append((url, f"sitemap unreadable: {type(exc).__name__}: {exc}"))
        return []
    for child in children:
        if depth < 3:  # indexes nest at most once in practice; the bound stops a cycle
            pages.extend(sitemap_urls(fetcher, child, failures, depth + 1))
    return list(dict.fromkeys(urldefrag(p)[0] for p in pages))


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


def crawl(fetcher: Fetcher, root: str, include: list[str], exclude: list[str], max_pages: int) -> Iterator[Page]:
    """Visit same-site pages under `root` breadth-first by their links, wave by wave."""
    prefix = root if root.endswith("/") else root.rsplit("/", 1)[0] + "/"
    seen, frontier = {root}, [root]
    while frontier:
        wave, frontier = frontier, []
        for page in fetcher.pages(wave):
            yield page
            for link in page.links:
                link = link.split("?", 1)[0]
                if link.startswith(prefix) and link not in seen and len(seen) < max_pages \
                        and selected(link, include, exclude):
                    seen.add(link)
                    frontier.append(link)
