"""Which sources a deployment lets its server re-index: folders under allowed roots, URLs under allowed prefixes."""

from __future__ import annotations

from pathlib import PurePath
from urllib.parse import urlsplit


def is_url(source: str) -> bool:
    """Tell a site or sitemap URL from a folder path."""
    return source.startswith(("http://", "https://"))


def parse(raw: str) -> list[str]:
    """Split a comma-separated allow-list, dropping blanks."""
    return [entry.strip() for entry in raw.split(",") if entry.strip()]


def url_allowed(url: str, entries: list[str]) -> bool:
    """Tell whether `url` has an allowed entry's scheme and host and its path starts at that entry's path."""
    wanted = urlsplit(url)
    for entry in filter(is_url, entries):
        allowed = urlsplit(entry)
        if (wanted.scheme, wanted.netloc.lower()) != (allowed.scheme, allowed.netloc.lower()):
            continue
        # Whole path segments only: /docs allows /docs/x and /docs/sitemap.xml, never /docs-private.
        prefix = allowed.path.rstrip("/")
        if wanted.path.rstrip("/") == prefix or wanted.path.startswith(prefix + "/"):
            return True
    return False


def path_allowed(resolved: PurePath, resolved_roots: list[PurePath]) -> bool:
    """Tell whether an already-resolved path is one of the resolved roots or inside one."""
    return any(resolved == root or resolved.is_relative_to(root) for root in resolved_roots)
