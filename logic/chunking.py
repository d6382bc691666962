"""How a Markdown page becomes chunks: split on headings, then by a token budget."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml
from tokenizers import Tokenizer

from logic.fences import Tracker, opening
from logic.markdown_text import normalize_markdown

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
_SENTENCE_BREAK = re.compile(r"(?<=[a-z0-9)`\]][.!?])\s+(?=[A-Z`(\"'])")  # "… cold process. Threads, …"
_LIST_OR_TABLE = re.compile(r"^\s*(?:[-+*]|\d+[.)]|\|)\s")
# The row under a table's header ("| --- | :---: |"): a table cut in two repeats the two lines above its rows.
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
MAX_FRONT_MATTER = 20_000  # characters; a page's title, slug and tags fit in far less
_EXPLICIT_ID = re.compile(r"\s*\{#([^}\s]+)\}$")  # Docusaurus `## Heading {#custom-id}`


@dataclass
class Passage:
    """A piece of a page with the metadata a citation needs."""

    source: str
    title: str
    heading_hierarchy: list[str]
    anchor: str
    body: str
    chunk_index: int = 0
    token_count: int = 0
    page_chunks: int = 1  # how many chunks the page has: ranking must not take a short page for a weak one
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """Hash the chunk's text, so a changed chunk gets a new id."""
        return hashlib.sha256(self.body.encode()).hexdigest()

    def embedding_text(self) -> str:
        """Prefix the body with its heading path, which carries most of a section's topic."""
        return f"{' > '.join([self.title, *self.heading_hierarchy])}\n\n{self.body}"


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    """Load the bundled embedder's WordPiece tokenizer from its package (no download)."""
    from logic.bundled_model import tokenizer_file

    tokenizer = Tokenizer.from_file(str(tokenizer_file()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=32768)
def count_tokens(text: str) -> int:
    """Count tokens as the local embedder sees them; its window (256) is what a chunk must fit."""
    # Cached: packing counts a paragraph, its parts and the finished chunk, often the same text.
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def slugify(heading: str) -> str:
    """Return the heading's anchor as Docusaurus (github-slugger) computes it."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    # Drop link targets, code ticks and emphasis markers, but keep intra-word underscores (max_tokens).
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"`|(?<!\w)[*_]+|[*_]+(?!\w)", "", text)
    return _SLUG_DROP.sub("", text).replace(" ", "-")


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases, which front matter never needs.

    A few hundred bytes of nested aliases expand to gigabytes once a value is turned into text.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Refuse an alias where the safe loader would expand it."""
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases are not allowed in front matter",
                                              self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        return super().compose_node(parent, index)


def parse_front_matter(text: str) -> tuple[dict[str, Any], str, str]:
    """Return (front matter, Markdown body, why the front matter was ignored or "")."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text, ""
    if len(match.group(1)) > MAX_FRONT_MATTER:
        return {}, text[match.end():], f"front matter longer than {MAX_FRONT_MATTER} characters, ignored"
    try:
        data = yaml.load(match.group(1), Loader=_NoAliasLoader) or {}  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        return {}, text[match.end():], f"front matter ignored: {problem}"
    return (data if isinstance(data, dict) else {}), text[match.end():], ""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Separate YAML front matter from the Markdown body; bad YAML is treated as no front matter."""
    data, body, _ = parse_front_matter(text)
    return data, body


def _sections(body: str) -> list[tuple[int, str, list[str]]]:
    """Split Markdown into (level, heading, lines) sections, ignoring '#' lines inside code fences."""
    sections: list[tuple[int, str, list[str]]] = [(0, "", [])]
    fences = Tracker()
    for line in body.splitlines():
        match = None if fences.fence_line(line) or fences.inside else _HEADING.match(line)
        if match:
            sections.append((len(match.group(1)), match.group(2).strip(), []))
        else:
            sections[-1][2].append(line)
    return sections


def _blocks(lines: list[str]) -> list[str]:
    """Group lines into paragraphs, keeping each fenced code block whole."""
    blocks: list[str] = []
    current: list[str] = []
    fences = Tracker()
    for line in lines:
        fences.fence_line(line)
        if not line.strip() and not fences.inside:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _segments(lines: list[str]) -> list[list[str]]:
    """Separate a paragraph into runs of prose and whole fenced code blocks."""
    segments: list[list[str]] = []
    fences, closed = Tracker(), False
    for line in lines:
        inside = fences.inside
        fence_line = fences.fence_line(line)
        if (fence_line and not inside) or not segments or closed:
            segments.append([])
        segments[-1].append(line)
        closed = fence_line and inside  # a closing fence ends its block's segment
    return [seg for seg in segments if seg]


def _sentence_cut(block: str) -> int | None:
    """Return where to cut a long prose paragraph: the sentence end nearest its middle (None for lists or one sentence).

    Cutting a hard-wrapped paragraph at a line end leaves half a sentence in each chunk, quoted as a fragment.
    """
    if _LIST_OR_TABLE.match(block):
        return None
    ends = [m.end() for m in _SENTENCE_BREAK.finditer(block)]
    return min(ends, key=lambda at: abs(at - len(block) / 2)) if ends else None


def _split(block: str, budget: int) -> list[str]:
    """Cut an oversized paragraph between sentences, else by lines; a cut code block or table keeps fences or header."""
    lines = block.splitlines()
    fences = Tracker()
    for line in lines:
        fences.fence_line(line)
    if fences.fence is not None and opening(lines[0]):
        lines.append(fences.fence)  # the page never closed this block; close it so halves stay code
    segments = _segments(lines)
    table = len(lines) > 2 and TABLE_RULE.match(lines[1]) and all(line.lstrip().startswith("|") for line in lines)
    if len(segments) > 1:
        halves = ["\n".join(seg) for seg in segments]
    elif table and len(lines) > 3:
        # Rows without their header do not render as a table and name no column: each half keeps the header.
        header, rows = lines[:2], lines[2:]
        mid = len(rows) // 2
        halves = ["\n".join([*header, *rows[:mid]]), "\n".join([*header, *rows[mid:]])]
    elif table:  # a header and one wide row: cut by lines, the header would stand alone and the row without it
        return [block]
    elif len(lines) > 3 and opening(lines[0]) and opening(lines[-1]):
        inner, mid = lines[1:-1], (len(lines) - 2) // 2
        halves = ["\n".join([lines[0], *inner[:mid], lines[-1]]), "\n".join([lines[0], *inner[mid:], lines[-1]])]
    elif not opening(lines[0]) and (cut := _sentence_cut(block)) is not None:
        halves = [block[:cut].rstrip(), block[cut:].lstrip()]
    elif len(lines) > 1 and not opening(lines[0]):
        mid = len(lines) // 2
        halves = ["\n".join(lines[:mid]), "\n".join(lines[mid:])]
    else:  # a fence around one long line cannot be cut further
        return [block]
    return [part for half in halves for part in _pack([half], budget)]


def _pack(blocks: list[str], budget: int) -> list[str]:
    """Pack paragraphs into pieces of at most `budget` tokens; an oversized paragraph is cut by lines."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        tokens = count_tokens(block)
        parts = _split(block, budget) if tokens > budget else [block]
        for part in parts:
            part_tokens = count_tokens(part)
            if current and size + part_tokens > budget:
                pieces.append("\n\n".join(current))
                current, size = [], 0
            current.append(part)
            size += part_tokens
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _anchor(heading: str, seen: dict[str, int]) -> str:
    """Return a heading's anchor: its explicit `{#id}`, else its slug numbered like Docusaurus repeats."""
    explicit = _EXPLICIT_ID.search(heading)
    if explicit:
        return explicit.group(1)
    anchor = slugify(heading) if heading else ""
    if anchor:
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchor = f"{anchor}-{count}" if count else anchor
    return anchor


def _tail(piece: str, overlap: int) -> str:
    """Return the last whole lines or sentences of a prose piece that fit in `overlap` tokens."""
    if overlap <= 0 or not piece.strip() or opening(piece.strip().splitlines()[-1]):
        return ""  # never carry half a code block into the next chunk
    parts = re.split(r"(?<=[.!?])\s+|\n+", piece.strip())
    kept: list[str] = []
    for part in reversed(parts):
        if count_tokens(" ".join([part, *kept])) > overlap:
            break
        kept.insert(0, part)
    return " ".join(kept)


def _with_overlap(pieces: list[str], overlap: int) -> list[str]:
    """Start each piece after the first with the end of the previous one, for context across a cut."""
    if overlap <= 0 or len(pieces) < 2:
        return pieces
    tails = [_tail(piece, overlap) for piece in pieces]
    joined = (f"{tail}\n\n{piece}" if tail else piece for tail, piece in zip(tails, pieces[1:], strict=False))
    return [pieces[0], *joined]


def chunk_markdown(text: str, source: str, chunk_tokens: int = 200, overlap: int = 0) -> list[Passage]:
    """Split one page into heading-scoped chunks of at most about `chunk_tokens` tokens.

    `overlap` tokens of the previous chunk's closing sentences open the next chunk of the same section.
    """
    if not 0 <= overlap < chunk_tokens // 2:
        raise ValueError(f"overlap must be between 0 and half the chunk size ({chunk_tokens // 2 - 1}), not {overlap}")
    front, body = split_front_matter(text)
    body = normalize_markdown(body)  # comments, bare tags, admonition and quote markers are no one's text
    sections = _sections(body)
    h1 = _EXPLICIT_ID.sub("", next((h for level, h, _ in sections if level == 1), ""))
    title = str(front.get("title") or h1 or front.get("sidebar_label") or source.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    chunks: list[Passage] = []
    path: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for level, heading, lines in sections:
        if level:
            path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, _EXPLICIT_ID.sub("", heading))]
        anchor = _anchor(heading, seen)
        hierarchy = [h for lvl, h in path if lvl > 1 or h != title]
        for piece in _with_overlap(_pack(_blocks(lines), chunk_tokens - overlap), overlap):
            if piece.strip():
                chunks.append(Passage(source, title, hierarchy, anchor, piece.strip()))
    for index, chunk in enumerate(chunks):
        chunk.chunk_index = index
        chunk.token_count = count_tokens(chunk.body)
        chunk.page_chunks = len(chunks)
    return chunks
