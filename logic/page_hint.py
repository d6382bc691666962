"""The page the reader is on, as a hint: its sections are preferred among equally relevant ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from logic.errors import InvalidInputError

MAX_PAGE_URL = 2048
# Added to the re-ranking score of chunks on the reader's page: enough to settle near-ties, too small
# to put a weak match above a clearly better one. The gate never sees it (top_score is untouched).
PAGE_BONUS = 0.05

ChunkT = TypeVar("ChunkT")


def clean_page_url(raw: Any) -> str:
    """Return the hint stripped, or raise InvalidInputError naming what is wrong with it."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise InvalidInputError(f"page_url must be a string (the URL of the page the question was asked on), "
                                f"got {type(raw).__name__}")
    url = raw.strip()
    if len(url) > MAX_PAGE_URL:
        raise InvalidInputError(f"page_url is {len(url)} characters long; at most {MAX_PAGE_URL} are accepted")
    return url


def page_key(url: str) -> str:
    """Name a page by its path without fragment, query, index file or extension, so links and hints compare."""
    path = urlsplit(url).path if "://" in url or url.startswith("/") else "/" + url.split("#", 1)[0]
    path = path.split("?", 1)[0].rstrip("/")
    for suffix in ("/index.html", "/index", ".html", ".htm", ".mdx", ".md", ".rst", ".ipynb"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return path.rstrip("/") or "/"


def prefer_page(chunks: Sequence[ChunkT], page_url: str, bonus: float = PAGE_BONUS) -> list[ChunkT]:
    """Return the chunks re-ordered with those on `page_url` raised by `bonus` (a stable sort)."""
    if not page_url:
        return list(chunks)
    wanted = page_key(page_url)
    raised: list[Any] = []
    for chunk in chunks:
        item: Any = chunk
        if page_key(str(item["source_url"])) == wanted:
            item = {**item, "relevance": round(float(item.get("relevance", item["score"])) + bonus, 4)}
        raised.append(item)
    return sorted(raised, key=lambda c: float(c.get("relevance", c["score"])), reverse=True)
