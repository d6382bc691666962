"""Which sources a deployment lets its server re-index: folders under allowed roots, URLs under allowed prefixes."""

from __future__ import annotations

from pathlib import PurePath
from urllib.parse import urlsplit

from logic import urls


def is_url(source: str) -> bool:
    """Tell a site or sitemap URL from a folder path."""
    return source.startswith(("http://", "https://"))


def parse(raw: str) -> list[str]:
    """Split a comma-separated allow-list, dropping blanks."""
    return [entry.strip() for entry in raw.split(",") if entry.strip()]


def url_allowed(url: str, entries: list[str]) -> bool:
    """Tell whether `url` has an allowed entry's scheme, host and port and its path lies under that entry's path.

    Both are compared normalised (logic.urls): `/docs/%2e%2e/private/` is `/private/`, never under `/docs/`.
    """
    try:
        wanted, path = urlsplit(urls.normalize(url)), urls.path_key(url)
    except urls.BadURLError:
        return False
    for entry in filter(is_url, entries):
        try:
            allowed, prefix = urlsplit(urls.normalize(entry)), urls.path_key(entry)
        except urls.BadURLError:
            continue
        # Whole path segments only: /docs allows /docs/x and /docs/sitemap.xml, never /docs-private.
        if (wanted.scheme, wanted.netloc) == (allowed.scheme, allowed.netloc) \
                and urls.under(path, prefix.rstrip("/") + "/"):
            return True
    return False


def path_allowed(resolved: PurePath, resolved_roots: list[PurePath]) -> bool:
    """Tell whether an already-resolved path is one of the resolved roots or inside one."""
    return any(resolved == root or resolved.is_relative_to(root) for root in resolved_roots)
