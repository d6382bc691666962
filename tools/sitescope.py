"""Which URLs belong to the site being ingested: its exact scheme, host and port, its path prefix, its robots.txt."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

ROBOTS_AGENT = "rag-agent-ingest"  # the token robots.txt rules name (User-agent: rag-agent-ingest)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int]:
    """Return a URL's (scheme, host, port), the port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:  # a port that is not a number names no server we could reach
        port = -1
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
    path = urlsplit(url).path or "/"
    if path.endswith("/"):
        return path
    last = path.rsplit("/", 1)[-1]
    # `/docs/index.html` or `/sitemap.xml` name a file: the site is its folder; `/docs` names the folder.
    return path.rsplit("/", 1)[0] + "/" if "." in last else path + "/"


@dataclass
class SiteScope:
    """The site the user named; everything else (other hosts, ports, schemes, paths, robots.txt) is refused."""

    root: str
    prefix: str = ""
    robots: RobotFileParser | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
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

    def refused_page(self, url: str) -> str:
        """Say why a page may not be indexed (another site, outside the path prefix, robots.txt), or ""."""
        reason = self.refused_request(url)
        if reason:
            return reason
        path = urlsplit(url).path or "/"
        if not (path + "/").startswith(self.prefix):
            return f"outside {self.prefix}"
        if self.robots is not None and not self.robots.can_fetch(ROBOTS_AGENT, url):
            return "disallowed by robots.txt"
        return ""

    def read_robots(self, status: int, body: bytes) -> None:
        """Take the site's robots.txt answer: rules on 200, everything refused on 401/403, no rules otherwise."""
        robots = RobotFileParser()
        if status == 200:
            robots.parse(body.decode("utf-8", errors="replace").splitlines())
        else:  # as urllib.robotparser reads it: a refused robots.txt refuses everything, a missing one nothing
            robots.parse(["User-agent: *", "Disallow: /"] if status in (401, 403) else [])
        self.robots = robots
