"""What a site's pages were when last indexed (sitemap lastmod, ETag, Last-Modified), kept beside the manifest."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from logic.errors import StorageError
from tools import manifest

log = logging.getLogger(__name__)


@dataclass
class Seen:
    """One page as it was when its chunks were written: its source name and what the site said about its version."""

    source: str
    lastmod: str = ""  # the sitemap's <lastmod>, as written there
    etag: str = ""
    last_modified: str = ""  # the response's Last-Modified header, an HTTP date

    def conditions(self) -> dict[str, str]:
        """Return the headers of a conditional GET: the page is sent again only if it changed."""
        headers = {"If-None-Match": self.etag} if self.etag else {}
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def path_for(data_dir: str | Path, collection: str) -> Path:
    """Return where a collection's page versions are kept."""
    return Path(data_dir) / "pages" / f"{collection}.json"


# The code that turns a fetched page into chunks: HTML to Markdown, Unicode clean-up, Markdown as a reader sees it,
# the split, and the tokenizer whose counts place the cuts. An index written by other code holds other chunks.
_READING_MODULES = ("tools.webpage", "logic.unicode_text", "logic.markdown_text", "logic.chunking")


@cache
def reading_version() -> str:
    """Fingerprint the code that reads pages into chunks, so an upgrade that reads them differently re-reads them."""
    from logic.bundled_model import tokenizer_file

    digest = hashlib.sha256()
    for name in _READING_MODULES:
        spec = importlib.util.find_spec(name)  # located, not imported: the HTML converter is slow to import
        assert spec is not None and spec.origin, f"{name} is part of this package"
        digest.update(Path(spec.origin).read_bytes())
    digest.update(tokenizer_file().read_bytes())
    return digest.hexdigest()[:16]


def chunking(chunk_tokens: int, chunk_overlap: int) -> str:
    """Name what a page's stored chunks depend on besides its text: the chunk settings and the reading code."""
    return f"{chunk_tokens}/{chunk_overlap}/{reading_version()}"


def load(data_dir: str | Path, collection: str, chunks: str) -> dict[str, Seen]:
    """Return the page versions (by URL) whose chunks the index holds, chunked as now; {} when there are none."""
    path = path_for(data_dir, collection)
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        info = manifest.load(data_dir)["collections"].get(collection) or {}
        pages = {str(url): Seen(**entry) for url, entry in dict(raw.get("pages", {})).items()}
    except (OSError, ValueError, TypeError, AttributeError, StorageError) as exc:
        # Only a cache: without it every page is fetched, which is slower and never wrong.
        log.warning("page versions %s unreadable (%s); every page is fetched", path, exc)
        return {}
    if raw.get("chunking") != chunks:
        return {}
    documents = info.get("documents", {})
    return {url: seen for url, seen in pages.items() if seen.source in documents}


def remember(data_dir: str | Path, collection: str, chunks: str, pages: dict[str, Seen], documents: set[str]) -> None:
    """Write the versions of the pages whose chunks are stored, atomically (never half a file)."""
    path = path_for(data_dir, collection)
    kept = {url: asdict(seen) for url, seen in sorted(pages.items())
            if seen.source in documents and (seen.lastmod or seen.etag or seen.last_modified)}
    if not kept and not path.exists():
        return  # a folder's ingest has no page versions: no file for it
    data: dict[str, Any] = {"chunking": chunks, "pages": kept}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pages-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)  # a full disk must not leave a temp file behind
        raise
