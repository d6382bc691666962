"""Answer hygiene, enforced in code whatever the model wrote: valid [n] citations, no foreign URLs, images or HTML."""

from __future__ import annotations

import re

from graph.state import Chunk, Citation

_MARKER = re.compile(r"\[(\d{1,2})\]")
_URL = re.compile(r"https?://[^\s)\]>\"']+(?<![.,;:!?])")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")
# Tags, comments and script/style blocks; a bare "<" in prose ("a < b") is left alone.
_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>",
                   re.DOTALL | re.IGNORECASE)


def cite(answer: str, chunks: list[Chunk]) -> tuple[str, list[Citation]]:
    """Renumber [n] markers by first use, dropping any that point at no retrieved chunk."""
    order: list[int] = []
    for match in _MARKER.finditer(answer):
        n = int(match.group(1))
        if 1 <= n <= len(chunks) and n not in order:
            order.append(n)
    new = {old: i + 1 for i, old in enumerate(order)}

    def renumber(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{new[n]}]" if n in new else ""

    citations: list[Citation] = [
        {**chunks[old - 1], "index": new[old], "text": chunks[old - 1]["text"][:500]} for old in order
    ]
    return re.sub(r" {2,}", " ", _MARKER.sub(renumber, answer)).strip(), citations


def strip_foreign_urls(answer: str, chunks: list[Chunk]) -> str:
    """Remove URLs that are not a retrieved chunk's source (a foreign link keeps only its text)."""
    allowed = {c["source_url"].split("#")[0] for c in chunks}

    def ok(url: str) -> bool:
        return url.split("#")[0] in allowed

    answer = _MD_LINK.sub(lambda m: m.group(0) if ok(m.group(2)) else m.group(1), answer)
    return _URL.sub(lambda m: m.group(0) if ok(m.group(0)) else "", answer)


def clean(answer: str, chunks: list[Chunk]) -> str:
    """Enforce answer hygiene whatever the model wrote: no images, no raw HTML, no foreign URLs."""
    answer = _HTML.sub("", _IMAGE.sub("", answer))
    return re.sub(r"[ \t]{2,}", " ", strip_foreign_urls(answer, chunks)).strip()
