"""Answer hygiene in code, whatever the model wrote: valid [n] citations; no foreign URLs, images, HTML, injections."""

from __future__ import annotations

import re
from collections.abc import Callable

from logic.injection import SENTENCE, is_instruction, own_hosts, strip_foreign_hosts
from logic.lexical import terms
from logic.types import Chunk, Citation

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
# Fenced code is quoted verbatim: tags (`<link>` in URDF) and indentation inside it are the content.
_FENCED = re.compile(r"(```.*?(?:```|\Z))", re.DOTALL)
# An inline code span shows its text literally (`<script>` tag, `<url>` placeholder): it is no raw HTML.
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """Apply `change` to the text outside fenced code blocks, leaving each block as written."""
    return "".join(part if i % 2 else change(part) for i, part in enumerate(_FENCED.split(text)))


def neutralize(text: str) -> str:
    """Replace instruction-like sentences in a chunk before it is quoted to the model."""
    return "".join(f"{NEUTRALIZED} " if is_instruction(s) else s for s in _ANSWER_SENTENCE.findall(text))


def trigger_terms(chunks: list[Chunk]) -> set[str]:
    """Return the words the chunks use only inside instruction-like sentences: what an injection wants said."""
    flagged: list[str] = []
    rest: list[str] = []
    for chunk in chunks:
        for sentence in _ANSWER_SENTENCE.findall(chunk["text"]):
            (flagged if is_instruction(sentence) else rest).append(sentence)
    return set(terms(" ".join(flagged))) - set(terms(" ".join(rest))) if flagged else set()


def drop_triggered(answer: str, chunks: list[Chunk]) -> str:
    """Remove answer sentences that repeat what an injected instruction asked for, or are instructions themselves."""
    triggers = trigger_terms(chunks)
    return "".join(s for s in _ANSWER_SENTENCE.findall(answer)
                   if not (triggers & set(terms(s)) or is_instruction(s)))


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
        """Return the cited chunks in their new order, each quoting its first 500 characters."""
        return [{**self.chunks[old - 1], "index": new, "text": self.chunks[old - 1]["text"][:500]}
                for new, old in enumerate(self.order, start=1)]


def cite(answer: str, chunks: list[Chunk]) -> tuple[str, list[Citation]]:
    """Renumber [n] markers by first use, dropping any that point at no retrieved chunk."""
    numbering = Numbering(chunks)
    return numbering.renumber(answer).strip(), numbering.citations()


def strip_foreign_urls(answer: str, chunks: list[Chunk]) -> str:
    """Remove URLs that are not a retrieved chunk's source (a foreign link keeps only its text)."""
    allowed = {c["source_url"].split("#")[0] for c in chunks}

    def ok(url: str) -> bool:
        return url.split("#")[0] in allowed

    answer = _MD_LINK.sub(lambda m: m.group(0) if ok(m.group(2)) else m.group(1), answer)
    answer = _URL.sub(lambda m: m.group(0) if ok(m.group(0)) else "", answer)
    # Bare domains, www. hosts, e-mail addresses and other schemes: only the sources' own hosts may be named.
    return strip_foreign_hosts(answer, own_hosts(list(allowed)), allowed)


def clean(answer: str, chunks: list[Chunk]) -> str:
    """Enforce answer hygiene whatever the model wrote: no images, raw HTML, foreign URLs or injected text."""
    def no_html(text: str) -> str:
        return "".join(p if i % 2 else _HTML.sub("", p) for i, p in enumerate(_INLINE_CODE.split(text)))

    def prose(part: str) -> str:
        return re.sub(r"[ \t]{2,}", " ", strip_foreign_urls(no_html(_IMAGE.sub("", part)), chunks))

    return outside_code(drop_triggered(answer, chunks), prose).strip()
