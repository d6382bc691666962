"""Fetching pages politely and within bounds: one site, a total time per page and per crawl, a size cap."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from tools.htmlworker import ParseLimitError, ParserPool
from tools.sitescope import SiteScope

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
GONE_STATUSES = frozenset({404, 410})
HTML_TYPES = ("text/html", "application/xhtml+xml")
PAGE_MAX_BYTES = 5_000_000  # a docs page is far smaller; parsing a bigger one costs ~20x its size in memory
LISTING_MAX_BYTES = 20_000_000  # a sitemap as sent (gzipped or not); its inflated size has its own cap
NOT_MODIFIED = "HTTP 304"  # a conditional GET's answer: the page is as it was when indexed
USER_AGENT = "rag-agent-ingest/0.1 (+docs indexer)"
_deadline = threading.local()  # the page being fetched on this thread: when its time is up, whether a page


class OffSiteError(httpx.RequestError):
    """A request (a sitemap entry, a link or a redirect) that would leave the site being ingested."""


class OutOfScopeError(OffSiteError):
    """A page request (a redirect) on the site but outside its path prefix or disallowed by robots.txt."""


class UnusableURLError(httpx.RequestError):
    """A URL (a link, a listed page, a redirect's Location) that no request can be built from."""


class TimeLimitError(httpx.TimeoutException):
    """A page or the whole crawl used up its total time."""


@dataclass
class Page:
    """One fetched URL: its Markdown and links when it is an HTML page, else why it was not."""

    url: str
    status: str  # "ok", "unchanged" (304 or sitemap lastmod), "skipped" (not HTML, not allowed), "gone", "failed"
    markdown: str = ""
    links: list[str] = field(default_factory=list)
    detail: str = ""
    etag: str = ""  # the response's validators, sent back in the next run's conditional GET
    last_modified: str = ""


def _left(timeout: float | None) -> float | None:
    """Return a socket timeout that also ends at this thread's page deadline."""
    deadline: float | None = getattr(_deadline, "at", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("time limit reached")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A socket stream whose every read and write ends by the page's deadline (a drip cannot outlast it)."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.SyncBackend):
    """httpcore's socket backend, with connections that respect the page deadline."""

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(super().connect_tcp(host, port, _left(timeout), local_address, socket_options))


class Fetcher:
    """An HTTP client with timeouts, total time caps, bounded concurrency, retries and a site boundary."""

    def __init__(self, *, concurrency: int = 4, timeout: float = 15.0, retries: int = 3, backoff: float = 0.5,
                 page_seconds: float = 60.0, crawl_seconds: float = 3600.0) -> None:
        self.concurrency, self.retries, self.backoff = concurrency, retries, backoff
        self.page_seconds, self.crawl_seconds = page_seconds, crawl_seconds
        self.crawl_deadline = time.monotonic() + crawl_seconds
        self.scope: SiteScope | None = None  # set by the crawl: which URLs may be requested and indexed
        self.parsers = ParserPool()  # pages are parsed in worker processes that a deadline can stop
        transport = httpx.HTTPTransport(limits=httpx.Limits(max_connections=concurrency))
        # httpx has no public setting for httpcore's network backend; the per-read timeout alone lets
        # a server that drips one byte at a time hold a page forever.
        transport._pool._network_backend = _Backend()  # noqa: SLF001
        self.client = httpx.Client(
            timeout=timeout, follow_redirects=True, transport=transport, headers={"User-Agent": USER_AGENT},
            event_hooks={"request": [self._check]},
        )

    def close(self) -> None:
        """Release the connection pool and the parser processes."""
        self.client.close()
        self.parsers.close()

    def login(self, user: str, password: str) -> None:
        """Send these credentials (from `user:password@` in the site URL) with every request to the site.

        Kept as an auth setting, never in a URL: URLs are stored, shown and logged, credentials must not be.
        """
        self.client.auth = httpx.BasicAuth(user, password)

    def _check(self, request: httpx.Request) -> None:
        """Refuse any request, redirects included, that the site boundary does not allow, before it is sent."""
        if not self.scope:
            return
        url = str(request.url)
        reason = self.scope.refused_request(url)
        if reason:
            raise OffSiteError(f"refused {url}: {reason}", request=request)
        # A page's redirect is held to the page rules (path prefix, robots.txt) before it is requested.
        reason = self.scope.refused_page(url) if getattr(_deadline, "page", False) else ""
        if reason:
            raise OutOfScopeError(f"refused redirect to {url}: {reason}", request=request)

    def crawl_expired(self) -> bool:
        """Tell whether the crawl has used up its total time."""
        return time.monotonic() >= self.crawl_deadline

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        """Return how long to wait before retrying: the server's Retry-After, else exponential backoff."""
        after = response.headers.get("Retry-After", "") if response is not None else ""
        delay = float(after) if after.isdigit() else self.backoff * 2**attempt
        left: float = _deadline.at - time.monotonic()
        return min(delay, 30.0, max(0.0, left))

    def get(self, url: str, *, html_only: bool = False,
            headers: dict[str, str] | None = None) -> tuple[httpx.Response, bytes]:
        """GET a URL within its total time, retrying 429/5xx and connection errors; non-HTML bodies skipped."""
        if self.crawl_expired():
            raise TimeLimitError(f"the crawl time limit ({self.crawl_seconds:g} s) was reached")
        _deadline.at = min(time.monotonic() + self.page_seconds, self.crawl_deadline)
        _deadline.page = html_only
        try:
            return self._attempts(url, html_only, headers or {})
        except httpx.InvalidURL as exc:  # not an HTTPError: one bad link or Location must not end the crawl
            raise UnusableURLError(f"invalid URL: {exc}") from None
        except httpx.TimeoutException as exc:
            if time.monotonic() >= _deadline.at:  # the total, not one slow read
                raise TimeLimitError(f"took longer than the time limit ({self.page_seconds:g} s per page, "
                                     f"{self.crawl_seconds:g} s per crawl)") from exc
            raise
        finally:
            _deadline.at, _deadline.page = None, False

    def _attempts(self, url: str, html_only: bool, headers: dict[str, str]) -> tuple[httpx.Response, bytes]:
        """Try a URL up to 1 + retries times."""
        for attempt in range(self.retries + 1):
            try:
                with self.client.stream("GET", url, headers=headers) as response:
                    if response.status_code in RETRY_STATUSES and attempt < self.retries:
                        time.sleep(self._wait(attempt, response))
                        continue
                    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
                    if html_only and (response.status_code != 200 or kind not in HTML_TYPES):
                        return response, b""  # a PDF or image is never downloaded just to be skipped
                    return response, _read(response, PAGE_MAX_BYTES if html_only else LISTING_MAX_BYTES)
            except httpx.TransportError:
                if attempt >= self.retries or time.monotonic() >= _deadline.at:
                    raise
                time.sleep(self._wait(attempt, None))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def page(self, url: str, conditions: dict[str, str] | None = None) -> Page:
        """Fetch one page (conditionally, given validators) and convert it; a failure becomes a Page, never raised."""
        # The page's time covers its parse too: one deadline from the first byte asked to the last link read.
        deadline = min(time.monotonic() + self.page_seconds, self.crawl_deadline)
        try:
            response, body = self.get(url, html_only=True, headers=conditions)
        except OutOfScopeError as exc:  # a redirect within the host but out of the path prefix, never requested
            return Page(url, "skipped", detail=str(exc))
        except httpx.HTTPError as exc:
            return Page(url, "failed", detail=f"{type(exc).__name__}: {exc}")
        etag, modified = response.headers.get("ETag", ""), response.headers.get("Last-Modified", "")
        if response.status_code == 304 and conditions:  # Not Modified: the chunks of last time still hold
            return Page(url, "unchanged", detail=NOT_MODIFIED, etag=etag, last_modified=modified)
        if response.status_code in GONE_STATUSES:
            return Page(url, "gone", detail=f"HTTP {response.status_code}")
        if response.status_code != 200:
            return Page(url, "failed", detail=f"HTTP {response.status_code}")
        if not body:
            kind = response.headers.get("Content-Type", "unknown type")
            return Page(url, "skipped", detail=f"not HTML ({kind})")
        try:
            markdown, links = self.parsers.parse(body, str(response.url), deadline)
        except ParseLimitError as exc:
            limits = f"{self.page_seconds:g} s per page, {self.crawl_seconds:g} s per crawl"
            return Page(url, "failed", detail=f"cannot parse: {exc} (time limit: {limits})")
        except Exception as exc:  # a page the parser chokes on is reported, never fatal to the run
            return Page(url, "failed", detail=f"cannot parse: {exc or type(exc).__name__}")
        return Page(url, "ok", markdown=markdown, links=links, etag=etag, last_modified=modified)

    def pages(self, urls: list[str], conditions: dict[str, dict[str, str]] | None = None) -> Iterator[Page]:
        """Fetch pages with at most `concurrency` requests in flight, yielding them in the given order."""
        known = conditions or {}
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            yield from pool.map(lambda url: self.page(url, known.get(url)), urls)


def _read(response: httpx.Response, limit: int) -> bytes:
    """Read a streamed body of at most `limit` bytes."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise httpx.DecodingError(f"body larger than {limit} bytes")
    return b"".join(chunks)
