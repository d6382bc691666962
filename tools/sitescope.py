"""Which URLs belong to the site being ingested: its exact scheme, host and port, its path prefix, its robots.txt."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from protego import Protego

from logic import urls

ROBOTS_AGENT = "rag-agent-ingest"  # the token robots.txt rules name (User-agent: rag-agent-ingest)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int]:
    """Return a URL's (scheme, host, port), the port made explicit."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:  # a bad IPv6 host or a port that is not a number names no server we could reach
        return "", "", -1
    return scheme, (parts.hostname or "").lower(), port


def is_private(host: str) -> bool:
    """Tell whether a host is a loopback, private, link-local or otherwise internal address."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local or address.is_reserved \
        or address.is_unspecified or address.is_multicast


def prefix_of(url: str) -> str:
    """Return the path a site root covers: `/docs/` for `.../docs/` or `.../docs`, `/` for a bare host."""
    path = urls.path_key(url)
    if path.endswith("/"):
        return path
    last = path.rsplit("/", 1)[-1]
    # `/docs/index.html` or `/sitemap.xml` name a file: the site is its folder; `/docs` names the folder.
    return path.rsplit("/", 1)[0] + "/" if "." in last else path + "/"


@dataclass
class SiteScope:
    r"""The site the user named; everything else (other hosts, ports, schemes, paths, robots.txt) is refused.

    Paths are compared as `logic.urls.path_key` reads them: `%2e%2e`, `//` and `\` cannot step out of
    the prefix nor around a robots.txt rule.
    """

    root: str
    prefix: str = ""
    robots: Protego | None = field(default=None, repr=False)
    # Why every page is refused when robots.txt could not be read (RFC 9309: a 5xx or an unreachable
    # robots.txt means complete disallow); "" when its rules (or none) apply.
    robots_refusal: str = ""

    def __post_init__(self) -> None:
        self.root = urls.normalize(self.root)  # no credentials, one spelling of the path
        self.site = origin(self.root)
        self.prefix = self.prefix or prefix_of(self.root)

    def origin_url(self) -> str:
        """Return the site's origin, e.g. `http://127.0.0.1:8000`."""
        parts = urlsplit(self.root)
        return f"{parts.scheme}://{parts.netloc}"

    def refused_request(self, url: str) -> str:
        """Say why a request (listing, page or redirect) may not be sent, or "" when it may."""
        target = origin(url)
        if target == self.site:
            return ""
        scheme, host, port = target
        if host != self.site[1] and is_private(host):
            return f"{host} is a private or loopback address and not the site being ingested"
        return f"another site ({scheme}://{host}:{port}) than {self.origin_url()}"

    def refused_path(self, url: str, prefix: str = "") -> str:
        """Say why a URL is not on this site under `prefix` (the scope's own by default), or ""."""
        reason = self.refused_request(url)
        if reason:
            return reason
        try:
            path = urls.path_key(url)
        except urls.BadURLError as exc:
            return str(exc)
        prefix = prefix or self.prefix
        if not urls.under(path, prefix):
            shown = urlsplit(url).path
            return f"outside {prefix}" + (f" ({shown} resolves to {path})" if shown != path else "")
        return ""

    def refused_page(self, url: str) -> str:
        """Say why a page may not be requested or indexed (another site, outside the prefix, robots.txt), or ""."""
        reason = self.refused_path(url)
        if reason:
            return reason
        if self.robots_refusal:
            return self.robots_refusal
        key = f"{self.origin_url()}{urls.path_key(url)}"
        if self.robots is not None and not self.robots.can_fetch(key, ROBOTS_AGENT):
            return "disallowed by robots.txt"
        return ""

    def read_robots(self, status: int, body: bytes, error: str = "") -> None:
        """Take the site's robots.txt answer as RFC 9309 says: rules on 200, none on 4xx, refuse all on 5xx.

        `status` 0 means no answer (`error` says why): unreachable, which also refuses every page.
        """
        self.robots, self.robots_refusal = None, ""
        if status == 200:
            self.robots = Protego.parse(body.decode("utf-8", errors="replace"))
        elif status >= 500 or status == 0:
            why = f"answered HTTP {status}" if status else f"could not be fetched ({error})"
            self.robots_refusal = (f"robots.txt {why}, so the whole site counts as disallowed (RFC 9309); "
                                   "re-run when it answers")
