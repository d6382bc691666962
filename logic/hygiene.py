"""Answer hygiene in code, whatever the model wrote: valid [n] citations; no foreign URLs, images, HTML, injections."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from logic import fences
from logic.injection import SENTENCE, is_instruction, named_links, own_hosts, readings, strip_foreign_hosts
from logic.lexical import terms
from logic.types import Chunk, Citation
from logic.unicode_text import normalize_text, skeleton

_MARKER = re.compile(r"\[(\d{1,2})\]")
_URL = re.compile(r"https?://[^\s)\]>\"'`]+(?<![.,;:!?])")  # a closing backtick ends the URL, not the code span
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")
# Tags, comments and script/style blocks; a bare "<" in prose ("a < b") is left alone.
_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>",
                   re.DOTALL | re.IGNORECASE)
# A sentence of an answer with its end punctuation (or line break), so dropping one keeps the layout;
# a dot inside a word ("attacker.example/login") does not end it.
_ANSWER_SENTENCE = SENTENCE
NEUTRALIZED = "[instruction-like text removed]"
# An inline code span shows its text literally (`<script>` tag, `<url>` placeholder): it is no raw HTML.
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """Apply `change` to the text outside fenced code blocks, leaving each block as written."""
    # Fenced code is quoted verbatim: tags (`<link>` in URDF) and indentation inside it are the content.
    return fences.outside(text, change, fences.IN_ANSWER)


def neutralize(text: str) -> str:
    """Replace instruction-like sentences in a chunk before it is quoted to the model."""
    return "".join(f"{NEUTRALIZED} " if is_instruction(s) else s for s in _ANSWER_SENTENCE.findall(text))


@lru_cache(maxsize=16)
def _source_facts(texts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """Return the trigger terms of the sources' instruction-like sentences, and the links their other text names.

    Cached: a streamed answer is cleaned sentence by sentence against the same sources.
    """
    flagged: list[str] = []
    rest: list[str] = []
    for text in texts:
        for sentence in _ANSWER_SENTENCE.findall(normalize_text(text)):
            if is_instruction(sentence):
                flagged += readings(sentence)  # its base64 and homoglyph readings say what it wants said too
            else:
                rest.append(sentence)
    triggers = set(terms(" ".join(flagged))) - set(terms(" ".join(rest))) if flagged else set()
    return frozenset(triggers), frozenset(named_links(" ".join(rest)))


def trigger_terms(chunks: list[Chunk]) -> set[str]:
    """Return the words the chunks use only inside instruction-like sentences: what an injection wants said."""
    return set(_source_facts(tuple(c["text"] for c in chunks))[0])


def drop_triggered(answer: str, chunks: list[Chunk]) -> str:
    """Remove answer sentences that repeat what an injected instruction asked for, or are instructions themselves."""
    triggers = trigger_terms(chunks)
    # Read as an ASCII skeleton too: "РWΝЕD" in Cyrillic and Greek letters is still the trigger.
    return "".join(s for s in _ANSWER_SENTENCE.findall(answer)
                   if not (triggers & set(terms(s) + terms(skeleton(s))) or is_instruction(s)))


class Numbering:
    """[n] markers renumbered by first use (whole answers and streamed sentences alike); bad ones dropped."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.order: list[int] = []  # chunk numbers in order of first citation

    def renumber(self, text: str) -> str:
        """Return `text` with its markers renumbered and those that point at no retrieved chunk removed."""
        # Code is quoted verbatim: an "[1]" index or runs of spaces inside a fence are the code's own.
        return outside_code(text, lambda part: re.sub(r" {2,}", " ", _MARKER.sub(self._marker, part)))

    def _marker(self, match: re.Match[str]) -> str:
        n = int(match.group(1))
        if not 1 <= n <= len(self.chunks):
            return ""
        if n not in self.order:
            self.order.append(n)
        return f"[{self.order.index(n) + 1}]"

    def citations(self) -> list[Citation]:
        """Return the cited chunks in their new order, each quoting its first 500 characters, normalised."""
        # The quote shown with a citation is the page's, less its instruction-like sentences (never quoted).
        cited: list[Citation] = [{**self.chunks[old - 1], "index": new,
                                  "text": neutralize(normalize_text(self.chunks[old - 1]["text"][:500]))}
                                 for new, old in enumerate(self.order, start=1)]
        return [shown_chunk(c) for c in cited]


def cite(answer: str, chunks: list[Chunk]) -> tuple[str, list[Citation]]:
    """Renumber [n] markers by first use, dropping any that point at no retrieved chunk."""
    numbering = Numbering(chunks)
    return numbering.renumber(answer).strip(), numbering.citations()


# A link's scheme a reader may follow from a citation; any other (javascript:, data:) is dropped.
_SAFE_SCHEME = re.compile(r"^(?:https?://|[^:/?#]*(?:[/?#]|$))", re.IGNORECASE)


def safe_url(url: str) -> str:
    """Return `url` if it is an http(s) link or a relative path, else "" (javascript:, data: and the like)."""
    url = normalize_text(url).strip()
    return url if _SAFE_SCHEME.match(url) else ""


_Shown = TypeVar("_Shown", Chunk, Citation)


def shown_chunk(chunk: _Shown) -> _Shown:
    """Return a chunk as it may be shown: title, headings and text normalised, its link checked."""
    shown = chunk.copy()
    shown["title"], shown["text"] = normalize_text(chunk["title"]), normalize_text(chunk["text"])
    shown["heading_hierarchy"] = [normalize_text(h) for h in chunk["heading_hierarchy"]]
    shown["source_url"] = safe_url(chunk["source_url"])
    return shown


def to_chunk(metadata: dict[str, Any], score: float) -> Chunk:
    """Turn a stored chunk's metadata into the state's Chunk (normalised: an older index may hold hidden text)."""
    chunk: Chunk = {
        "chunk_id": str(metadata.get("chunk_id", "")),
        "source": str(metadata.get("source", "")),
        "source_url": str(metadata.get("source_url", "")),
        "title": str(metadata.get("title", "")),
        "heading_hierarchy": list(metadata.get("heading_hierarchy") or []),
        "score": round(score, 4),
        "text": str(metadata.get("text", "")),
    }
    if isinstance(metadata.get("chunk_index"), int):
        chunk["chunk_index"] = metadata["chunk_index"]
    return shown_chunk(chunk)


# What removing a link can leave behind: an empty code span or brackets ("(see )"), punctuation after a space,
# two marks in a row (", ." or ",."), runs of spaces.
_LEFTOVERS = ((re.compile(r"(?<!`)``(?!`)|\(\s*(?:see|at|cf\.|e\.g\.,?|via)?\s*\)|\[\s*\](?!\()", re.IGNORECASE), ""),
              (re.compile(r"[ \t]+(?=[,.;:!?])"), ""), (re.compile(r"[,;:]+\s*(?=[.!?])"), ""),
              (re.compile(r"([,;:])(?:\s*[,;:])+"), r"\1"),
              (re.compile(r"[ \t]{2,}"), " "))


def _tidy(text: str) -> str:
    """Clean up the punctuation a removed link leaves behind."""
    for pattern, replacement in _LEFTOVERS:
        text = pattern.sub(replacement, text)
    return text


def strip_foreign_urls(answer: str, chunks: list[Chunk]) -> str:
    """Remove URLs that are neither a retrieved chunk's source nor written in the sources' text.

    A foreign link keeps only its text; an inline code span naming a foreign link goes whole (an emptied
    span such as `KEY=` would read as the documented value), and no stray punctuation is left behind.
    """
    allowed = {c["source_url"].split("#")[0] for c in chunks}
    # Links the docs themselves write (outside instruction-like sentences) are theirs to quote:
    # `RAG_AGENT_ALLOWED_ORIGINS=https://docs.example.com` keeps its value.
    keep = allowed | _source_facts(tuple(c["text"] for c in chunks))[1]
    hosts = own_hosts(list(allowed))

    def ok(url: str) -> bool:
        return url.split("#")[0] in keep or url in keep

    def strip(text: str) -> str:
        text = _MD_LINK.sub(lambda m: m.group(0) if ok(m.group(2)) else m.group(1), text)
        text = _URL.sub(lambda m: m.group(0) if ok(m.group(0)) else "", text)
        # Bare domains, www. hosts, e-mail addresses and other schemes: only the sources' own hosts may be named.
        return strip_foreign_hosts(text, hosts, keep)

    parts = _INLINE_CODE.split(answer)
    cleaned = "".join(("" if strip(p) != p else p) if i % 2 else strip(p) for i, p in enumerate(parts))
    return cleaned if cleaned == answer else _tidy(cleaned)


def clean(answer: str, chunks: list[Chunk]) -> str:
    """Enforce answer hygiene whatever the model wrote: no images, raw HTML, foreign URLs or injected text.

    Normalised first (no tag characters, bidi controls or zero-width characters; see logic/unicode_text):
    hidden text can neither reach the reader nor split a link or an order so that the checks miss it.
    """
    answer = normalize_text(answer)

    def no_html(text: str) -> str:
        return "".join(p if i % 2 else _HTML.sub("", p) for i, p in enumerate(_INLINE_CODE.split(text)))

    def prose(part: str) -> str:
        return re.sub(r"[ \t]{2,}", " ", strip_foreign_urls(no_html(_IMAGE.sub("", part)), chunks))

    return outside_code(drop_triggered(answer, chunks), prose).strip()
